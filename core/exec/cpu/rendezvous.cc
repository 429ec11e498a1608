#include "core/exec/cpu/rendezvous.h"

#include <fmt/format.h>

namespace sl::exec::cpu {

Result<std::vector<Contribution>> Rendezvous::exchange(const RendezvousKey& key, int64_t device,
                                                       const std::vector<int64_t>& participants,
                                                       Contribution value) {
  std::unique_lock<std::mutex> lock(mu_);
  Slot& slot = slots_[key];
  if (!slot.contributions.emplace(device, std::move(value)).second) {
    return runtime_error(fmt::format("'{}': device {} joined occurrence {} twice", key.instruction->name, device,
                                     key.occurrence));
  }
  cv_.notify_all();

  // An exchange every participant has joined completes even after an abort,
  // and a participant that finished without failing is this device's own
  // error: each member fails (or not) on its own, so where several fail
  // alike the error does not depend on which thread got there first.
  Status missing;
  bool all_in = false;
  auto ready = [&] {
    bool waiting = false;
    for (int64_t p : participants) {
      if (slots_[key].contributions.count(p)) continue;
      const bool known = p >= 0 && static_cast<size_t>(p) < finished_.size();
      if (known && finished_[static_cast<size_t>(p)] && !failed_[static_cast<size_t>(p)]) {
        missing = runtime_error(fmt::format("'{}': device {} finished without joining the collective that "
                                            "device {} waits in (occurrence {})",
                                            key.instruction->name, p, device, key.occurrence));
        return true;
      }
      waiting = true;
    }
    all_in = !waiting;
    return all_in || !aborted_.is_ok();
  };
  cv_.wait(lock, ready);
  if (!all_in) return !missing.is_ok() ? missing : aborted_;

  Slot& done = slots_[key];
  std::vector<Contribution> out;
  out.reserve(participants.size());
  for (int64_t p : participants) out.push_back(done.contributions.at(p));
  // The slot goes once every contributor has read it; members of other groups
  // under the same key keep it alive until they have read too.
  if (++done.readers == done.contributions.size()) slots_.erase(key);
  return out;
}

void Rendezvous::post(int64_t from, int64_t to, int64_t sequence, Contribution value) {
  std::lock_guard<std::mutex> lock(mu_);
  mailbox_[{from, to, sequence}] = std::move(value);
  cv_.notify_all();
}

Result<Contribution> Rendezvous::take(const hlo::Instruction& receiver, int64_t from, int64_t to,
                                      int64_t sequence) {
  std::unique_lock<std::mutex> lock(mu_);
  const std::tuple<int64_t, int64_t, int64_t> key{from, to, sequence};
  // As exchange: a posted message is taken even after an abort, and a sender
  // that finished without failing and without sending is this device's own error.
  const bool known = from >= 0 && static_cast<size_t>(from) < finished_.size();
  auto gone = [&] { return known && finished_[static_cast<size_t>(from)] && !failed_[static_cast<size_t>(from)]; };
  cv_.wait(lock, [&] { return mailbox_.count(key) || gone() || !aborted_.is_ok(); });
  auto it = mailbox_.find(key);
  if (it == mailbox_.end()) {
    if (!gone()) return aborted_;
    return runtime_error(fmt::format("'{}': device {} finished without sending message {} that device {} receives",
                                     receiver.name, from, sequence, to));
  }
  Contribution value = std::move(it->second);
  mailbox_.erase(it);
  return value;
}

void Rendezvous::abort(const Status& why, int64_t device) {
  std::lock_guard<std::mutex> lock(mu_);
  if (device >= 0 && static_cast<size_t>(device) < failed_.size()) failed_[static_cast<size_t>(device)] = true;
  if (aborted_.is_ok()) aborted_ = why.is_ok() ? runtime_error("rendezvous aborted") : why;
  cv_.notify_all();
}

void Rendezvous::device_finished(int64_t device) {
  std::lock_guard<std::mutex> lock(mu_);
  if (device >= 0 && static_cast<size_t>(device) < finished_.size()) finished_[static_cast<size_t>(device)] = true;
  cv_.notify_all();
}

}  // namespace sl::exec::cpu
