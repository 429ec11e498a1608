#include "app/gui/layout/stats.h"

#include <algorithm>
#include <climits>

#include "app/gui/layout/indexed_analysis.h"

namespace sl::gui {

TraceStats compute_stats(const trace::CompactTrace& trace) { return compute_stats(trace, build_index(trace)); }

TraceStats compute_stats(const trace::CompactTrace& trace, const TraceIndex& index) {
  TraceStats stats;
  stats.events = static_cast<int64_t>(trace.events.size());
  stats.makespan_ns = trace.makespan_ns();
  if (trace.events.empty()) return stats;
  stats.streams = indexed_stream_busy(trace, index);
  stats.overlap = indexed_overlap(trace, index);
  stats.critical_path = indexed_critical_path(trace, index);
  stats.kernels = trace::kernel_statistics(trace);
  stats.kernel_rows = kernel_table(trace);
  stats.longest = longest_events(trace, kLongestEvents);
  stats.steps = step_spans(trace);
  int64_t begin = INT64_MAX, end = INT64_MIN;
  for (const trace::EventRef& e : trace.events) {
    begin = std::min(begin, e.start_ns);
    end = std::max(end, e.end_ns);
  }
  stats.overview = overview(trace, begin, end);
  return stats;
}

}  // namespace sl::gui
