#pragma once
// Turn CUDA / cuBLASLt / NCCL return codes into Status values naming the
// call (and, through `where`, the instruction).

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "core/common/status.h"

namespace sl::exec::cuda {

inline Status cuda_status(cudaError_t e, const char* call, const std::string& where) {
  if (e == cudaSuccess) return ok_status();
  return runtime_error(std::string(call) + " failed" + (where.empty() ? "" : " (" + where + ")") + ": " +
                       cudaGetErrorString(e));
}
inline Status cublas_status(cublasStatus_t e, const char* call, const std::string& where) {
  if (e == CUBLAS_STATUS_SUCCESS) return ok_status();
  return runtime_error(std::string(call) + " failed" + (where.empty() ? "" : " (" + where + ")") + ": " +
                       cublasLtGetStatusString(e));
}
inline Status nccl_status(ncclResult_t e, const char* call, const std::string& where) {
  if (e == ncclSuccess) return ok_status();
  return runtime_error(std::string(call) + " failed" + (where.empty() ? "" : " (" + where + ")") + ": " +
                       ncclGetErrorString(e));
}

}  // namespace sl::exec::cuda

#define SL_CUDA(call, where) SL_RETURN_IF_ERROR(::sl::exec::cuda::cuda_status((call), #call, (where)))
#define SL_CUBLAS(call, where) SL_RETURN_IF_ERROR(::sl::exec::cuda::cublas_status((call), #call, (where)))
#define SL_NCCL(call, where) SL_RETURN_IF_ERROR(::sl::exec::cuda::nccl_status((call), #call, (where)))
