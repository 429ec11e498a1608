// Fault injection for the GPU tests: SL_CUDA_FAIL_THUNK and
// SL_CUDA_HANG_THUNK (cuda_backend_impl.h) make one device fail or hang at a
// chosen thunk, to reproduce what that does to the other devices.

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/exec/cuda/cuda_backend_impl.h"

namespace sl::exec::cuda {

std::optional<CudaBackend::InjectedFault> CudaBackend::injected_fault(const char* variable) {
  const char* env = std::getenv(variable);
  if (env == nullptr) return std::nullopt;
  InjectedFault f;
  unsigned long long thunk = 0;
  long long device = -1;
  if (std::sscanf(env, "%lld:%llu", &device, &thunk) != 2) return std::nullopt;
  f.device = device;
  f.thunk = static_cast<size_t>(thunk);
  return f;
}

Status CudaBackend::check_injected_fault(const sched::Thunk& t, size_t index, const DeviceContext& ctx) const {
  const int64_t device = ctx.program->device;
  if (fail_at_ && fail_at_->device == device && fail_at_->thunk == index) {
    return runtime_error(fmt::format("{}: injected failure (SL_CUDA_FAIL_THUNK)", where(t, ctx)));
  }
  if (hang_at_ && hang_at_->device == device && hang_at_->thunk == index) {
    while (comms_ != nullptr && !comms_->aborted()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return runtime_error(fmt::format("{}: injected hang (SL_CUDA_HANG_THUNK), stopped: {}", where(t, ctx),
                                     comms_ ? comms_->abort_reason() : "no NCCL to stop"));
  }
  return ok_status();
}

}  // namespace sl::exec::cuda
