// Reading a run's results back: the ROOT's tuple leaves from every local
// device's arena, decoded into literals (--results), and the description of
// the GPUs the run used.

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>

#include "core/exec/cuda/cuda_backend_impl.h"
#include "core/exec/cuda/cuda_check.h"
#include "core/exec/cuda/host_convert.h"

namespace sl::exec::cuda {

Result<std::vector<DeviceResults>> CudaBackend::read_results(const sched::LoweredProgram& program) {
  const hlo::Computation& entry = program.module->entry_computation();
  const hlo::Instruction& root =
      entry.instructions.at(static_cast<size_t>(entry.root >= 0 ? entry.root : entry.instructions.size() - 1));
  auto leaves = root.shape.leaves();
  std::vector<DeviceResults> out;
  for (DeviceContext& ctx : devices_) {
    SL_CUDA(cudaSetDevice(ctx.ordinal), "");
    DeviceResults r;
    r.device = ctx.program->device;
    r.replica = ctx.program->replica;
    r.partition = ctx.program->partition;
    for (size_t l = 0; l < leaves.size() && l < program.buffers.outputs.size(); ++l) {
      const sched::BufferSlice& s = program.buffers.outputs[l];
      std::vector<uint8_t> bytes(static_cast<size_t>(std::max<int64_t>(s.size, 0)));
      if (s.offset >= 0 && !bytes.empty()) {
        SL_CUDA(cudaMemcpy(bytes.data(), ctx.at(s), bytes.size(), cudaMemcpyDeviceToHost), "copying results back");
      }
      if (leaves[l]->is_array()) {
        if (bytes.size() < static_cast<size_t>(leaves[l]->byte_size())) bytes.resize(leaves[l]->byte_size());
        r.outputs.push_back(decode_literal(*leaves[l], bytes.data()));
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string CudaBackend::device_description() const {
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, devices_.empty() ? 0 : devices_[0].ordinal);
  std::string out = fmt::format("{} x{}", prop.name, devices_.size());
  if (options_.dist) out += fmt::format(" (rank {} of {})", options_.dist->rank, options_.dist->world_size);
  return out;
}

}  // namespace sl::exec::cuda
