// libstreamlens_cuda.so: the CUDA backend behind app/common/cuda_plugin.h.

#include "app/common/cuda_plugin.h"
#include "core/exec/cuda/cuda_backend.h"

namespace {

sl::Result<std::unique_ptr<sl::exec::Backend>> make_backend(const sl::exec::CudaOptions& options) {
  return sl::exec::make_cuda_backend(options);
}

const sl::app::CudaPlugin kPlugin{.abi = sl::app::kCudaPluginAbi,
                                  .make_backend = make_backend,
                                  .device_count = sl::exec::cuda_device_count,
                                  .device_name = sl::exec::cuda_device_name};

}  // namespace

extern "C" __attribute__((visibility("default"))) const sl::app::CudaPlugin* streamlens_cuda_plugin() {
  return &kPlugin;
}
