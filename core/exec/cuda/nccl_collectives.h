#pragma once
// NCCL communicators (one per replica group, created once with
// ncclCommInitAll for the whole single-process run) and the collective
// thunks: each collective, tuple or not, is one ncclGroupStart/ncclGroupEnd.

#include <nccl.h>

#include <map>
#include <vector>

#include "core/common/status.h"
#include "core/exec/cuda/device_context.h"
#include "core/sched/lowering.h"

namespace sl::exec::cuda {

class NcclComms {
 public:
  // Creates a communicator for every distinct group of the program's
  // collectives (and the world group for collective-permute peers).
  static Result<std::unique_ptr<NcclComms>> create(const sched::LoweredProgram& program);
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
