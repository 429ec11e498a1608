#pragma once
// Where the device threads of the CPU backend meet for a collective. Every
// occurrence of a collective has a key (instruction, occurrence); each device
// contributes its operands and waits for the other members of its group.
// A device that fails aborts the rendezvous, and a device that finishes
// without joining releases the others with an error, so no thread waits
// forever.

#include <compare>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/exec/literal.h"
#include "core/hlo/module.h"

namespace sl::exec::cpu {

struct RendezvousKey {
  const hlo::Instruction* instruction = nullptr;
  int64_t occurrence = 0;
  auto operator<=>(const RendezvousKey&) const = default;
};

using Contribution = std::shared_ptr<const std::vector<Literal>>;

class Rendezvous {
 public:
  explicit Rendezvous(int64_t num_devices)
      : finished_(static_cast<size_t>(num_devices), false), failed_(static_cast<size_t>(num_devices), false) {}

  // Contributes `value` for `device` and waits until every device in
  // `participants` has contributed under the same key. Returns the
  // contributions in participant order.
  Result<std::vector<Contribution>> exchange(const RendezvousKey& key, int64_t device,
                                             const std::vector<int64_t>& participants, Contribution value);

  // Point to point (send / recv): the n-th message from `from` to `to` is
  // posted without waiting and taken by the receiver, who waits for it. As
  // NCCL does, messages between two devices pair up in order.
  void post(int64_t from, int64_t to, int64_t sequence, Contribution value);
  Result<Contribution> take(const hlo::Instruction& receiver, int64_t from, int64_t to, int64_t sequence);

  // Fails every current and future exchange that not all its participants
  // have joined, and every take, with `why` (the first abort wins); `device`
  // (-1: none) is the one that failed.
  void abort(const Status& why, int64_t device = -1);
  // `device` will contribute nothing more; waiters that need it give up.
  void device_finished(int64_t device);

 private:
  struct Slot {
    std::map<int64_t, Contribution> contributions;
    size_t readers = 0;
  };

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<RendezvousKey, Slot> slots_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, Contribution> mailbox_;  // (from, to, sequence)
  std::vector<bool> finished_;
  std::vector<bool> failed_;  // devices that aborted
  Status aborted_;
};

}  // namespace sl::exec::cpu
