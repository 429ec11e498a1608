#pragma once
// Statistics of one trace for the statistics panel, computed once when a run
// is opened, from core/trace/analysis.h (the same numbers `streamlens show`
// prints): busy time per stream, compute/communication overlap, the critical
// path and the per-kernel table.

#include <cstdint>
#include <vector>

#include "app/gui/layout/kernel_table.h"
#include "app/gui/layout/track_index.h"
#include "core/trace/analysis.h"
#include "core/trace/compact_trace.h"

namespace sl::gui {

struct TraceStats {
  int64_t makespan_ns = 0;
  int64_t events = 0;
  std::vector<trace::StreamBusy> streams;   // sorted by (device, stream), like the tracks
  trace::OverlapReport overlap;
  trace::CriticalPath critical_path;
  std::vector<trace::KernelStats> kernels;  // by total time, largest first
  std::vector<KernelRow> kernel_rows;       // the sortable table (with medians and the longest call)
  std::vector<uint32_t> longest;            // the longest individual events, longest first
  std::vector<StepSpan> steps;              // linked captures' steps, --iterations passes
  Overview overview;                        // the whole run, for the overview strip
  double busy_fraction(const trace::StreamBusy& s) const {
    return makespan_ns > 0 ? static_cast<double>(s.busy_ns) / static_cast<double>(makespan_ns) : 0.0;
  }
};

constexpr size_t kLongestEvents = 200;

// Busy time, overlap and the critical path come from the index (no copies of
// the events: indexed_analysis.h); the overload without one builds it.
TraceStats compute_stats(const trace::CompactTrace& trace, const TraceIndex& index);
TraceStats compute_stats(const trace::CompactTrace& trace);

}  // namespace sl::gui
