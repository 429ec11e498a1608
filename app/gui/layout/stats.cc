#include "app/gui/layout/stats.h"

namespace sl::gui {

TraceStats compute_stats(const trace::Trace& trace) {
  TraceStats stats;
  stats.events = static_cast<int64_t>(trace.events.size());
  stats.makespan_ns = trace.makespan_ns();
  if (trace.events.empty()) return stats;
  stats.streams = trace::stream_busy_time(trace);
  stats.overlap = trace::compute_communication_overlap(trace);
  stats.critical_path = trace::critical_path(trace);
  stats.kernels = trace::kernel_statistics(trace);
  return stats;
}

}  // namespace sl::gui
