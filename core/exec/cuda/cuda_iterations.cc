// The iteration loop: every device's thread queues its warm-up and recorded
// iterations back to back, with the streams joined at each iteration's end.

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "core/exec/cuda/cuda_backend_impl.h"
#include "core/exec/cuda/cuda_check.h"
#include "cupti_tracer/cupti_api.h"

namespace sl::exec::cuda {

using sched::Thunk;
using sched::ThunkKind;

// All iterations of one device, queued without a host synchronization in
// between (as a training loop runs): a host sync per iteration would start
// every iteration with the skew between the devices' host threads, which the
// first collective then waits out. Iterations stay apart on the GPU: each
// ends with every stream joined into the main stream, and the next starts
// with every stream waiting for that join.
Status CudaBackend::run_iterations(DeviceContext& ctx, const IterationPlan& plan,
                                   cupti::ActivityCollector* collector, BackgroundFlush* flush,
                                   const std::function<void(int64_t, int64_t)>& progress) {
  const int warmup = plan.warmup;
  const int total = warmup + plan.recorded;
  const std::string at = fmt::format("iteration boundary on device {}", ctx.program->device);
  if (collector != nullptr) {
    size_t launches = 0;
    for (const Thunk& t : ctx.program->thunks) {
      launches += t.kind != ThunkKind::kRecordEvent && t.kind != ThunkKind::kWaitEvent;
    }
    collector->reserve_launches(static_cast<int32_t>(ctx.program->device), launches * static_cast<size_t>(total));
  }
  for (int it = 0; it < total; ++it) {
    const bool keep = it >= warmup;
    if (it > 0) {
      for (auto& [s, cs] : ctx.streams) {
        if (s != sched::kMainStream) SL_CUDA(cudaStreamWaitEvent(cs, ctx.boundary_event, 0), at);
      }
    }
    // Traced, the first (dropped, tagged) iterations launch every thunk on
    // its stream: they show the collector what each graph node leaves.
    const bool graphs = !ctx.graphs.empty() && (collector == nullptr || it >= kTeachingIterations);
    SL_RETURN_IF_ERROR(issue(ctx, keep ? it - warmup : -1 - it, keep, it < plan.tagged, graphs, collector));
    if (it + 1 == plan.tagged && plan.tagging_done) plan.tagging_done();
    for (auto& [s, cs] : ctx.streams) {
      if (s == sched::kMainStream) continue;
      cudaEvent_t joined = ctx.join_events.at(s);
      SL_CUDA(cudaEventRecord(joined, cs), at);
      SL_CUDA(cudaStreamWaitEvent(ctx.stream(sched::kMainStream), joined, 0), at);
    }
    SL_CUDA(cudaEventRecord(ctx.boundary_event, ctx.stream(sched::kMainStream)), at);
    if (!ctx.iteration_done.empty()) {
      SL_CUDA(cudaEventRecord(ctx.iteration_done[static_cast<size_t>(it) % ctx.iteration_done.size()],
                              ctx.stream(sched::kMainStream)),
              at);
      if (plan.issued != nullptr) plan.issued->store(it + 1, std::memory_order_release);
    }
    // Completed CUPTI buffers go to the collector as the run goes (the last,
    // partly filled one at the forced flush after the run), off this thread
    // and at most every kMinFlushInterval.
    if (flush != nullptr && ctx.ordinal == devices_.front().ordinal) flush->request();
    if (progress) progress(it + 1, total);
  }
  return ok_status();
}

int CudaBackend::effective_warmup(const RunOptions& options) const {
  const int warmup = std::max(0, options.warmup);
  // From the options, not from the graphs that could be built: every rank
  // of a multi-process run must issue as many iterations.
  return !options.command_buffers.empty() && options_.trace ? std::max(kTeachingIterations, warmup) : warmup;
}

Status CudaBackend::run_devices(const RunOptions& options, cupti::ActivityCollector* collector,
                                BackgroundFlush* flush, std::vector<std::atomic<int>>& issued) {
  const int warmup = effective_warmup(options);
  const int iterations = std::max(1, options.iterations);
  std::vector<Status> statuses(devices_.size());
  // Tagging every launch costs the launching threads CUPTI's API records
  // (+60-80% on 10,000 tiny kernels on an H200); the warm-up iterations (or
  // the first) teach the collector what each launch leaves on its stream, and
  // later ones are attributed by stream order. SL_CUPTI_TAG_ALL=1 tags all.
  const bool tag_all = cupti::tag_all_launches();
  std::atomic<size_t> still_tagging{devices_.size()};
  auto tagging_done = [&] {
    if (still_tagging.fetch_sub(1) == 1 && collector && !tag_all) (void)cupti::CuptiApi::set_api_records(false);
  };
  std::atomic<int> first_failed{-1};
  std::vector<std::thread> threads;
  for (size_t d = 0; d < devices_.size(); ++d) {
    threads.emplace_back([&, d] {
      bool done = false;
      IterationPlan plan{.warmup = warmup,
                         .recorded = iterations,
                         .tagged = tag_all ? warmup + iterations : std::max(1, warmup),
                         .tagging_done =
                             [&] {
                               done = true;
                               tagging_done();
                             },
                         .issued = &issued[d]};
      statuses[d] = run_iterations(devices_[d], plan, collector, flush, d == 0 ? options.progress : nullptr);
      if (!done) tagging_done();  // failed early: do not keep the others' API records on
      if (!statuses[d].is_ok()) {
        int none = -1;
        first_failed.compare_exchange_strong(none, static_cast<int>(d));
        // The other devices may wait in a collective for this one: stop them.
        if (comms_) comms_->abort_all(fmt::format("device {} failed", devices_[d].program->device));
      }
    });
  }
  for (auto& th : threads) th.join();
  // The first failure is the cause; the others' are NCCL stopping for it.
  if (first_failed >= 0) return statuses[static_cast<size_t>(first_failed.load())];
  return ok_status();
}

}  // namespace sl::exec::cuda
