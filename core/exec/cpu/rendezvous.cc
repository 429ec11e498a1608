#include "core/exec/cpu/rendezvous.h"

#include <fmt/format.h>

namespace sl::exec::cpu {

Result<std::vector<Contribution>> Rendezvous::exchange(const RendezvousKey& key, int64_t device,
                                                       const std::vector<int64_t>& participants,
                                                       Contribution value) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!aborted_.is_ok()) return aborted_;
  Slot& slot = slots_[key];
  if (!slot.contributions.emplace(device, std::move(value)).second) {
    return runtime_error(fmt::format("'{}': device {} joined occurrence {} twice", key.instruction->name, device,
                                     key.occurrence));
  }
  cv_.notify_all();

  Status missing;
  auto ready = [&] {
    if (!aborted_.is_ok()) return true;
    for (int64_t p : participants) {
      if (slots_[key].contributions.count(p)) continue;
      if (p >= 0 && static_cast<size_t>(p) < finished_.size() && finished_[static_cast<size_t>(p)]) {
        missing = runtime_error(fmt::format("'{}': device {} finished without joining the collective that "
                                            "device {} waits in (occurrence {})",
                                            key.instruction->name, p, device, key.occurrence));
        return true;
      }
      return false;
    }
    return true;
  };
  cv_.wait(lock, ready);
  if (!aborted_.is_ok()) return aborted_;
  if (!missing.is_ok()) return missing;

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
  cv_.wait(lock, [&] {
    if (!aborted_.is_ok() || mailbox_.count(key)) return true;
    return from >= 0 && static_cast<size_t>(from) < finished_.size() && finished_[static_cast<size_t>(from)];
  });
  if (!aborted_.is_ok()) return aborted_;
  auto it = mailbox_.find(key);
  if (it == mailbox_.end()) {
    return runtime_error(fmt::format("'{}': device {} finished without sending message {} that device {} receives",
                                     receiver.name, from, sequence, to));
  }
  Contribution value = std::move(it->second);
  mailbox_.erase(it);
  return value;
}

void Rendezvous::abort(const Status& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_.is_ok()) aborted_ = why.is_ok() ? runtime_error("rendezvous aborted") : why;
  cv_.notify_all();
}

void Rendezvous::device_finished(int64_t device) {
  std::lock_guard<std::mutex> lock(mu_);
  if (device >= 0 && static_cast<size_t>(device) < finished_.size()) finished_[static_cast<size_t>(device)] = true;
  cv_.notify_all();
}

}  // namespace sl::exec::cpu
