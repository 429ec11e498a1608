#include "app/cli/run_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/trace/analysis.h"
#include "core/trace/iterations.h"
#include "core/trace/report.h"

namespace sl::cli {

std::string run_summary_text(const trace::RunInfo& info, const trace::Trace& trace) {
  std::string out = fmt::format("run {} '{}': {} on {} ({} device{}), {} events, makespan {} us\n", info.id,
                                info.name, info.backend, info.device_model, info.num_devices,
                                info.num_devices == 1 ? "" : "s", trace.events.size(),
                                trace::format_us(trace.makespan_ns()));
  if (size_t iterations = trace::iterations_of(trace).size(); iterations > 1) {
    const trace::Trace median = trace::one_iteration(trace, trace::median_iteration(trace));
    out += fmt::format("  {} iterations; the median one took {} us\n", iterations,
                       trace::format_us(median.makespan_ns()));
  }
  int64_t makespan = std::max<int64_t>(trace.makespan_ns(), 1);
  for (const trace::StreamBusy& s : trace::stream_busy_time(trace)) {
    out += fmt::format("  device {} stream {:>3} ({:<13}) busy {:>10} us ({:5.1f}%), {} events\n", s.device,
                       s.stream, sched::stream_kind_name(s.stream_kind), trace::format_us(s.busy_ns),
                       100.0 * static_cast<double>(s.busy_ns) / static_cast<double>(makespan), s.event_count);
  }
  trace::OverlapReport overlap = trace::compute_communication_overlap(trace);
  if (overlap.communication_ns > 0) {
    out += fmt::format("  compute/communication overlap: {:.1f}% of {} us of communication\n",
                       100.0 * overlap.ratio, trace::format_us(overlap.communication_ns));
  }
  std::vector<trace::KernelStats> kernels = trace::kernel_statistics(trace);
  // The simulator's waits (rendezvous, SMs held by a GEMM) are no kernels.
  std::erase_if(kernels, [](const trace::KernelStats& k) { return k.kind == trace::EventKind::kWait; });
  size_t shown = std::min<size_t>(kernels.size(), 5);
  if (shown > 0) out += "  top kernels by total time:\n";
  for (size_t i = 0; i < shown; ++i) {
    const trace::KernelStats& k = kernels[i];
    out += fmt::format("    {:<40} {:>6}x  total {:>10} us  mean {:>10} us\n", k.name, k.count,
                       trace::format_us(k.total_ns), trace::format_us(static_cast<int64_t>(k.mean_ns)));
  }
  return out;
}

}  // namespace sl::cli
