#pragma once
// The collective thunks: each collective, tuple or not, is one
// ncclGroupStart/ncclGroupEnd on the communicator of its group
// (nccl_comms.h).

#include "core/common/status.h"
#include "core/exec/cuda/device_context.h"
#include "core/exec/cuda/nccl_comms.h"

namespace sl::exec::cuda {

Status issue_collective(const sched::Thunk& thunk, DeviceContext& ctx);

}  // namespace sl::exec::cuda
