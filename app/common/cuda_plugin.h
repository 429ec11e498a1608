#pragma once
// The CUDA backend lives in a plugin,
// libstreamlens_cuda.so, loaded on first use (dlopen), so that commands
// without a GPU start without loading CUDA, cuBLASLt, NCCL or CUPTI, and the
// same binary runs where those libraries are missing (cuda runs then fail
// with the loader's reason, exit 3). Header free of CUDA. Capture files are
// read without it (cupti_tracer/capture_file.h needs no CUDA library).

#include <memory>
#include <string>

#include "core/common/status.h"
#include "core/exec/backend.h"
#include "core/exec/cuda/cuda_backend.h"
#include "core/trace/trace.h"

namespace sl::app {

// Bumped whenever CudaPlugin or the types it passes change layout.
constexpr int kCudaPluginAbi = 4;

struct CudaPlugin {
  int abi = kCudaPluginAbi;
  Result<std::unique_ptr<exec::Backend>> (*make_backend)(const exec::CudaOptions& options) = nullptr;
  int (*device_count)() = nullptr;
  std::string (*device_name)(int ordinal) = nullptr;
};

// The loaded plugin, or kRuntime "no GPU: the CUDA backend is not available
// (...)" naming what the loader said. Loads once; later calls are cheap.
// $STREAMLENS_CUDA_PLUGIN names the file; otherwise it is looked for beside
// the executable, in PREFIX/lib/streamlens, then where it was built.
Result<const CudaPlugin*> cuda_plugin();

}  // namespace sl::app

// The plugin's one exported symbol.
extern "C" const sl::app::CudaPlugin* streamlens_cuda_plugin();
