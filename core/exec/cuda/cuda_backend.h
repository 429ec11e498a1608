#pragma once
// The CUDA backend (DESIGN section 4): real CUDA streams per program stream,
// cuBLASLt GEMMs, CUDA kernels for elementwise/data ops, NCCL collectives,
// kernel times from the CUPTI tracer. One process drives all visible GPUs
// (program device g runs on CUDA device g). Free of CUDA includes.

#include <memory>

#include "core/common/status.h"
#include "core/exec/backend.h"

namespace sl::exec {

struct CudaOptions {
  // Record kernels with CUPTI (needed for a timeline; off only for benches
  // that time with CUDA events).
  bool trace = true;
};

// kRuntime "no GPU: <cuda error string>" when cudaGetDeviceCount fails or
// finds no device.
Result<std::unique_ptr<Backend>> make_cuda_backend(const CudaOptions& options = {});

// Number of visible CUDA devices (0 when none or no driver).
int cuda_device_count();

}  // namespace sl::exec
