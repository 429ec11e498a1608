#pragma once
// The compare view's data: core/trace/compare.h's comparison (events
// matched per (device, instruction, occurrence), deltas sorted by size)
// plus, for drawing, which events of each run every delta refers to and
// which instructions changed (moved to another stream, or their duration
// changed noticeably), so those can be outlined on the shared time axis.

#include <cstdint>
#include <string>
#include <vector>

#include "app/gui/layout/track_index.h"
#include "core/trace/compact_trace.h"
#include "core/trace/compare.h"
#include "core/trace/run_info.h"
#include "core/trace/trace.h"

namespace sl::gui {

struct CompareOptions {
  int64_t min_duration_delta_ns = 100;       // below this a duration change is noise
  double min_duration_delta_fraction = 0.02; // ... and below 2% of the baseline duration
};

struct TimeSpan {
  int64_t start_ns = 0, end_ns = 0;
};

struct Comparison {
  trace::Comparison summary;              // a = baseline, b = current
  std::vector<int64_t> base_event;        // per delta: event index in the baseline, -1 if none
  std::vector<int64_t> current_event;     // per delta: event index in the current run, -1 if none
  std::vector<uint8_t> changed;           // per delta
  std::vector<uint8_t> base_changed;      // per baseline event
  std::vector<uint8_t> current_changed;   // per current event
  int64_t changed_count = 0;
  // The compared iterations (compared_span), filled by whoever has both
  // loaded runs (the GUI model).
  TimeSpan base_span, current_span;
};

// Timeline rows when comparing: one per (device, stream) of either run, the
// baseline's track above the current run's, so the same stream lines up.
// With `matched`, a stream of one run whose number the other run lacks is
// paired with the other's stream that most of its matched instructions ran
// on: a simulated run's stream 0 with the CUDA stream 14 a capture shows.
struct AlignedTrack {
  int32_t device = 0, stream = 0;
  int base_track = -1;      // index into the baseline's TraceIndex::tracks, -1: not in the baseline
  int current_track = -1;   // ... in the current run's
};
std::vector<AlignedTrack> align_tracks(const TraceIndex& base, const TraceIndex& current,
                                       const trace::Comparison* matched = nullptr);

// Where a run's compared iteration (trace::RunSummary::iteration) lies on
// its own time axis: that iteration's first start to last end, or
// [begin_ns, end_ns] (the whole run) when the comparison took all of it.
// The baseline drawn shifted by base.start - current.start puts the two
// compared iterations on top of each other (a captured step over its
// simulation at 0).
TimeSpan compared_span(const trace::CompactTrace& trace, int32_t iteration, int64_t begin_ns, int64_t end_ns);

// Why the two runs look like different programs, or empty: nothing matched
// while both have events, or most instructions exist in one run only.
std::string programs_differ(const Comparison& c);

bool delta_changed(const trace::InstructionDelta& d, const CompareOptions& options);

Comparison compare_for_view(const trace::RunInfo& base_info, const trace::Trace& base,
                            const trace::RunInfo& current_info, const trace::Trace& current,
                            const CompareOptions& options = {});

}  // namespace sl::gui
