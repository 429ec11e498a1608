// run() of the CUDA backend: the order of the steps, each in its own file
// (cuda_backend_impl.h lists them), and the factory.

#include "core/exec/cuda/cuda_backend.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/exec/cuda/cuda_backend_impl.h"
#include "core/exec/cuda/cuda_check.h"
#include "cupti_tracer/cupti_api.h"

namespace sl::exec {
namespace cuda {

static_assert(static_cast<int>(hlo::PrimitiveType::kPred) == 0 && static_cast<int>(hlo::PrimitiveType::kF64) == 8,
              "kernels.cu indexes element types by hlo::PrimitiveType value");

Result<RunOutput> CudaBackend::run(const sched::LoweredProgram& program, const RunOptions& options) {
  if (program.module == nullptr) return invalid_input("lowered program has no module");
  struct Cleanup {
    CudaBackend* self;
    ~Cleanup() { self->teardown(); }
  } cleanup{this};

  std::unique_ptr<cupti::ActivityCollector> collector;
  if (options_.trace) {
    collector = std::make_unique<cupti::ActivityCollector>();
    // Enabled before any CUDA work so the context is traced from its start.
    SL_RETURN_IF_ERROR(cupti::CuptiApi::start(collector.get()));
  }
  struct StopTracer {
    bool on;
    ~StopTracer() { if (on) (void)cupti::CuptiApi::stop(); }
  } stop_tracer{options_.trace};

  SL_RETURN_IF_ERROR(setup(program, options));
  SL_RETURN_IF_ERROR(init_memory(program, options));
  SL_RETURN_IF_ERROR(setup_graphs(options, collector.get()));
  for (DeviceContext& ctx : devices_) {
    SL_CUDA(cudaSetDevice(ctx.ordinal), "");
    SL_CUDA(cudaDeviceSynchronize(), "initialising parameters");
    if (collector) {
      collector->map_device(static_cast<uint32_t>(ctx.ordinal), static_cast<int32_t>(ctx.program->device));
      for (auto& [s, cs] : ctx.streams) {
        SL_ASSIGN_OR_RETURN(uint32_t id, cupti::CuptiApi::stream_id(cs));
        collector->map_stream(static_cast<uint32_t>(ctx.ordinal), id, s);
      }
    }
  }
  SL_RETURN_IF_ERROR(agree_on_time_origin(collector.get()));

  std::optional<BackgroundFlush> flush;
  if (collector) flush.emplace(kMinFlushInterval);
  const auto iterations_start = std::chrono::steady_clock::now();
  // Declared before the watchdogs, which poll them until they are reset.
  std::vector<std::atomic<int>> issued(devices_.size());
  std::vector<int> finished(devices_.size(), 0);
  Watchdogs watchdogs;
  start_watchdogs(options, issued, finished, &watchdogs);
  SL_RETURN_IF_ERROR(run_devices(options, collector.get(), flush ? &*flush : nullptr, issued));
  if (flush) {
    Status flushed = flush->status();
    flush.reset();
    SL_RETURN_IF_ERROR(flushed);
  }
  const int total = effective_warmup(options) + std::max(1, options.iterations);
  for (DeviceContext& ctx : devices_) {
    SL_CUDA(cudaSetDevice(ctx.ordinal), "");
    const cudaError_t synced = cudaDeviceSynchronize();
    if (comms_ && comms_->aborted()) break;  // why NCCL stopped says more than the error of its kernels
    SL_RETURN_IF_ERROR(cuda_status(synced, "cudaDeviceSynchronize()",
                                   fmt::format("running {} iterations on device {}", total, ctx.program->device)));
  }
  watchdogs.peers.reset();
  watchdogs.stall.reset();
  if (comms_ && comms_->aborted()) return runtime_error("NCCL stopped: " + comms_->abort_reason());
  // No rank closes its connection while another still runs (PeerWatch).
  if (rendezvous_) SL_RETURN_IF_ERROR(rendezvous_->barrier());

  RunOutput out;
  out.iterations_wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - iterations_start).count();
  if (collector) {
    SL_RETURN_IF_ERROR(cupti::CuptiApi::flush());
    out.trace = collector->build_trace();
    if (fusions_) fusions_->add_counters(&out.trace);
    add_graph_results(&out);
    if (!rendezvous_) out.trace.normalize_time();  // ranks keep rank 0's origin
  }
  if (options.collect_results) {
    SL_ASSIGN_OR_RETURN(out.results, read_results(program));
  }
  if (!collector) {
    for (const std::string& note : graph_stats_.notes) out.notes.push_back(note);
  }
  out.device_description = device_description();
  return out;
}

}  // namespace cuda

Result<std::unique_ptr<Backend>> make_cuda_backend(const CudaOptions& options) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return runtime_error(std::string("no GPU: ") + cudaGetErrorString(e));
  if (n == 0) return runtime_error("no GPU: no CUDA device is visible");
  return std::unique_ptr<Backend>(new cuda::CudaBackend(options));
}

}  // namespace sl::exec
