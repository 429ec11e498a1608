#pragma once
// NCCL communicators (one per replica group, created once per run: with
// ncclCommInitAll when one process drives every device, or with
// ncclCommInitRank and ids from rank 0's rendezvous when each process runs
// one device) and the collective thunks: each collective, tuple or not, is
// one ncclGroupStart/ncclGroupEnd.

#include <nccl.h>

#include <algorithm>
#include <map>
#include <span>
#include <vector>

#include "core/common/status.h"
#include "core/dist/rendezvous.h"
#include "core/exec/cuda/device_context.h"
#include "core/sched/lowering.h"

namespace sl::exec::cuda {

class NcclComms {
 public:
  // Creates a communicator for every distinct group of the program's
  // collectives (and the world group for collective-permute peers).
  // Single process: program device g is CUDA device g.
  static Result<std::unique_ptr<NcclComms>> create(const sched::LoweredProgram& program);
  // One process per device: this process holds program device `device` on
  // CUDA device `ordinal`; rank 0 makes the unique ids and broadcasts them.
  static Result<std::unique_ptr<NcclComms>> create_for_rank(const sched::LoweredProgram& program,
                                                            dist::Rendezvous& rendezvous, int64_t device,
                                                            int ordinal);
  ~NcclComms();
  NcclComms(const NcclComms&) = delete;
  NcclComms& operator=(const NcclComms&) = delete;

  // Communicator of `device` in `group` (global device ids), null if none.
  ncclComm_t get(std::span<const int64_t> group, int64_t device) const;

 private:
  // Orders groups by their ids; transparent, so a thunk's span finds its
  // group without a copy.
  struct GroupLess {
    using is_transparent = void;
    bool operator()(std::span<const int64_t> a, std::span<const int64_t> b) const {
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
    }
  };
  NcclComms() = default;
  std::map<std::vector<int64_t>, std::vector<ncclComm_t>, GroupLess> comms_;
};

Status issue_collective(const sched::Thunk& thunk, DeviceContext& ctx);

}  // namespace sl::exec::cuda
