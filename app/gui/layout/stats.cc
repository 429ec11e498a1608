#include "app/gui/layout/stats.h"

#include <algorithm>
#include <climits>

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
  stats.kernel_rows = kernel_table(trace);
  stats.longest = longest_events(trace, kLongestEvents);
  stats.steps = step_spans(trace);
  int64_t begin = INT64_MAX, end = INT64_MIN;
  for (const trace::Event& e : trace.events) {
    begin = std::min(begin, e.start_ns);
    end = std::max(end, e.end_ns);
  }
  stats.overview = overview(trace, begin, end);
  return stats;
}

}  // namespace sl::gui
