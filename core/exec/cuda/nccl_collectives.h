#pragma once
// NCCL communicators (one per replica group, created once per run: with
// ncclCommInitAll when one process drives every device, or with
// ncclCommInitRank and ids from rank 0's rendezvous when each process runs
// one device) and the collective thunks: each collective, tuple or not, is
// one ncclGroupStart/ncclGroupEnd.

#include <nccl.h>

#include <map>
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
  ncclComm_t get(const std::vector<int64_t>& group, int64_t device) const;

 private:
  NcclComms() = default;
  std::map<std::vector<int64_t>, std::vector<ncclComm_t>> comms_;
};

Status issue_collective(const sched::Thunk& thunk, DeviceContext& ctx);

}  // namespace sl::exec::cuda
