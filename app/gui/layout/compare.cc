#include "app/gui/layout/compare.h"

#include <algorithm>
#include <cstdlib>

namespace sl::gui {

bool delta_changed(const trace::InstructionDelta& d, const CompareOptions& options) {
  if (!d.matched()) return true;
  if (d.stream_a != d.stream_b) return true;
  int64_t threshold =
      std::max<int64_t>(options.min_duration_delta_ns,
                        static_cast<int64_t>(options.min_duration_delta_fraction * static_cast<double>(d.duration_a_ns)));
  return std::llabs(d.duration_delta_ns()) > threshold;
}

Comparison compare_for_view(const trace::RunInfo& base_info, const trace::Trace& base,
                            const trace::RunInfo& current_info, const trace::Trace& current,
                            const CompareOptions& options) {
  Comparison c;
  c.summary = trace::compare_runs(base_info, base, current_info, current);
  c.base_changed.assign(base.events.size(), 0);
  c.current_changed.assign(current.events.size(), 0);
  // The events of the compared (median) iteration, as compare_runs matched them.
  const std::vector<int64_t> base_events = trace::delta_events(c.summary, true, base);
  const std::vector<int64_t> current_events = trace::delta_events(c.summary, false, current);
  for (size_t k = 0; k < c.summary.deltas.size(); ++k) {
    const trace::InstructionDelta& d = c.summary.deltas[k];
    int64_t a = base_events[k];
    int64_t b = current_events[k];
    bool changed = delta_changed(d, options);
    c.base_event.push_back(a);
    c.current_event.push_back(b);
    c.changed.push_back(changed ? 1 : 0);
    if (!changed) continue;
    ++c.changed_count;
    if (a >= 0) c.base_changed[static_cast<size_t>(a)] = 1;
    if (b >= 0) c.current_changed[static_cast<size_t>(b)] = 1;
  }
  return c;
}

}  // namespace sl::gui
