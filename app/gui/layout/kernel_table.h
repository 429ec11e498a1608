#pragma once
// The statistics panel's acting tables: per-kernel rows (count, total, share,
// mean, median, min, max, and the event of the longest call, so a click can
// select it), sortable by any column; the longest individual events; the
// same for a time range; step spans of linked runs; and the overview strip's
// bins of the whole run. All pure, computed off the UI thread or on demand.

#include <cstdint>
#include <string>
#include <vector>

#include "core/trace/compact_trace.h"

namespace sl::gui {

struct KernelRow {
  std::string name;
  trace::EventKind kind = trace::EventKind::kOther;  // the kind with the most time under this name
  int64_t count = 0;
  int64_t total_ns = 0;
  double share = 0;        // total / all rows' total, 0..1
  double mean_ns = 0;
  int64_t median_ns = 0;   // the lower median for even counts
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  int64_t longest_event = -1;  // index of the event with max_ns
};

enum class KernelColumn { kName, kCount, kTotal, kShare, kMean, kMedian, kMin, kMax };

// Events whose start lies in [t0, t1) (the whole trace by default), per name,
// sorted by total time, largest first.
std::vector<KernelRow> kernel_table(const trace::CompactTrace& trace, int64_t t0 = INT64_MIN, int64_t t1 = INT64_MAX);
void sort_kernel_rows(std::vector<KernelRow>& rows, KernelColumn column, bool ascending);

// The `n` longest events starting in [t0, t1), longest first (ties: earlier first).
std::vector<uint32_t> longest_events(const trace::CompactTrace& trace, size_t n, int64_t t0 = INT64_MIN,
                                     int64_t t1 = INT64_MAX);

// A time range's statistics (a shift-drag in the timeline measures it).
struct RangeStats {
  int64_t t0 = 0, t1 = 0;
  int64_t events = 0;
  int64_t busy_ns = 0;     // summed over events starting in the range
  std::vector<KernelRow> kernels;
  std::vector<uint32_t> longest;
};
RangeStats range_stats(const trace::CompactTrace& trace, int64_t t0, int64_t t1, size_t longest_n = 50);

// The span of each step (Event::iteration >= 0) when the trace has two or
// more: linked captures number their steps, --iterations runs their passes.
struct StepSpan {
  int32_t step = 0;
  int64_t start_ns = 0, end_ns = 0;
};
std::vector<StepSpan> step_spans(const trace::CompactTrace& trace);

// The whole run cut into `bins` equal time bins: busy time summed over all
// tracks and the kind with the most time in each, for the overview strip.
struct OverviewBin {
  int64_t busy_ns = 0;
  trace::EventKind kind = trace::EventKind::kOther;
};
struct Overview {
  int64_t begin_ns = 0, end_ns = 0;
  int64_t max_busy_ns = 0;
  std::vector<OverviewBin> bins;
};
Overview overview(const trace::CompactTrace& trace, int64_t begin_ns, int64_t end_ns, size_t bins = 1024);

}  // namespace sl::gui
