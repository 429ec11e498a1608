#pragma once
// The CUDA backend (docs/architecture.md): real CUDA streams per program stream,
// cuBLASLt GEMMs, CUDA kernels for elementwise/data ops, NCCL collectives,
// kernel times from the CUPTI tracer. One process drives all visible GPUs
// (program device g runs on CUDA device g), or, in multi-process mode, one
// device each (CudaOptions::dist). Free of CUDA includes.

#include <memory>
#include <optional>
#include <string>

#include "core/common/status.h"
#include "core/dist/dist_env.h"
#include "core/exec/backend.h"

namespace sl::exec {

struct CudaOptions {
  // Record kernels with CUPTI (needed for a timeline; off only for benches
  // that time with CUDA events).
  bool trace = true;
  // One process per GPU (RANK, WORLD_SIZE, ... as torchrun sets them): this
  // process runs program device `rank` on CUDA device `local_rank`, NCCL ids
  // come over a TCP rendezvous with rank 0, and every rank's trace counts
  // from rank 0's start, so their runs line up when merged. Empty: one
  // process drives every device of the program.
  std::optional<dist::DistEnv> dist;
  // Where NVRTC-compiled fusion kernels are cached: empty takes
  // $XDG_CACHE_HOME/streamlens/kernels (or ~/.cache/...); "off" caches nothing.
  std::string codegen_cache;
};

// kRuntime "no GPU: <cuda error string>" when cudaGetDeviceCount fails or
// finds no device.
Result<std::unique_ptr<Backend>> make_cuda_backend(const CudaOptions& options = {});

// Number of visible CUDA devices (0 when none or no driver).
int cuda_device_count();

// The device's name ("NVIDIA H200"), or "cuda" when it cannot be read.
std::string cuda_device_name(int ordinal);

}  // namespace sl::exec
