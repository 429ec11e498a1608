// The event loop: pops the next job to finish (or to start after its launch
// gap), lets the streams it freed advance, and re-rates what changed.

#include "sim/engine.h"

#include <fmt/format.h>

#include "sim/engine_state.h"

namespace sl::sim {
namespace engine_internal {

Result<trace::Trace> Engine::run() {
  SL_RETURN_IF_ERROR(prepare());
  rendezvous_name_ = trace_.strings.intern("rendezvous");
  held_name_ = trace_.strings.intern("wait for SMs held by a GEMM");
  gemm_name_ = trace_.strings.intern("gemm");
  kernel_name_ = trace_.strings.intern("kernel");
  int64_t kernels = 0;
  for (const auto& p : programs_) {
    for (const Thunk& t : p.thunks) kernels += t.kind == ThunkKind::kRecordEvent || t.kind == ThunkKind::kWaitEvent ? 0 : 1;
  }
  trace_.events.reserve(static_cast<size_t>(kernels));
  for (size_t d = 0; d < devices_.size(); ++d) {
    for (size_t s = 0; s < devices_[d].streams.size(); ++s) ready_.emplace_back(static_cast<int>(d), static_cast<int>(s));
  }
  SL_RETURN_IF_ERROR(drain());
  rerate();
  int64_t reported = 0;
  while (!heap_.empty()) {
    HeapEntry top = heap_.top();
    heap_.pop();
    Job& j = jobs_[top.job];
    if (!j.active || j.version != top.version) continue;
    if (!(top.time <= kMaxTimeNs)) {
      const std::string at = j.collective || j.members.empty()
                                 ? std::string("a collective")
                                 : where(j.members[0].device, j.members[0].stream, j.thunk);
      return invalid_input(fmt::format(
          "simulated time passes {:.3g} ns (int64 nanoseconds end at 9.2e18, 292 years) at {}: the device model's "
          "rates are too small or the program's work too large",
          top.time, at));
    }
    now_ = std::max(now_, top.time);
    if (j.launching) {
      begin_after_launch(top.job);
    } else {
      complete(top.job);
    }
    SL_RETURN_IF_ERROR(drain());
    rerate();
    if (options_.progress && thunks_done_ - reported >= 65536) {
      reported = thunks_done_;
      options_.progress(thunks_done_, thunks_total_);
    }
  }
  SL_RETURN_IF_ERROR(deadlock_error());
  if (options_.progress) options_.progress(thunks_done_, thunks_total_);
  if (collectives_held_ > 0) {
    trace_.add_counter(
        kCollectivesHeldCounter, collectives_held_,
        "collectives launched after a GEMM that held every SM of a member device: each started when "
        "that GEMM ended (launch the collective first)");
    trace_.add_counter(kHeldNsCounter, std::llround(held_ns_), "ns those collectives waited for the GEMMs");
  }
  if (custom_calls_by_bytes_ > 0) {
    trace_.add_counter(kCustomCallsByBytesCounter, custom_calls_by_bytes_,
                       "custom-calls other than cuBLAS GEMMs, costed by their operand and result bytes alone");
  }
  if (options_.host_issue != nullptr) {
    trace_.add_counter(kHostBoundCounter, host_bound_,
                       "kernels that started when the host issued them, later than their stream allowed");
    trace_.add_counter(kHostWaitNsCounter, std::llround(host_wait_ns_),
                       "ns those kernels waited for the host beyond their launch gap");
    trace_.add_counter(kHostSyncsCounter, host_syncs_,
                       "times the host blocked until the main stream was done (a while loop's predicate copy)");
  }
  if (options_.cold_graph_wait != nullptr) {
    trace_.add_counter(kColdGraphWaitNsCounter, std::llround(cold_graph_wait_ns_),
                       "ns graph nodes waited after a cold graph launch's first node started (graph_cold_wait_*)");
  }
  if (waits_without_record_ > 0) {
    trace_.add_counter("sim.wait_without_record", waits_without_record_,
                       "stream waits on an event with no record before them in program order (no-op, as in CUDA)");
  }
  return std::move(trace_);
}

}  // namespace engine_internal

Result<trace::Trace> simulate(const std::vector<sched::DeviceProgram>& devices, const DeviceModel& model,
                              const SimOptions& options) {
  engine_internal::Engine engine(devices, model, options);
  return engine.run();
}

}  // namespace sl::sim
