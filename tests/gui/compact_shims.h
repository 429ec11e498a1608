#pragma once
// The GUI's layout and statistics take a compact trace (core/trace/
// compact_trace.h); the tests build full traces by hand (add_event). These
// overloads run the real functions on the compact form of such a trace, so a
// test reads as before. Results hold no references into the trace.

#include "app/gui/layout/indexed_analysis.h"
#include "app/gui/layout/kernel_table.h"
#include "app/gui/layout/stats.h"
#include "app/gui/layout/timeline_layout.h"
#include "app/gui/layout/track_index.h"
#include "core/trace/compact_trace.h"
#include "core/trace/trace.h"

namespace sl::gui {

// Reference positions' times, read from the full trace itself.
inline int64_t start_at(const trace::Trace& t, const Track& track, size_t p) {
  return t.events[track.event(p)].start_ns;
}
inline int64_t end_at(const trace::Trace& t, const Track& track, size_t p) {
  const trace::Event& e = t.events[track.event(p)];
  return e.end_ns > e.start_ns ? e.end_ns : e.start_ns;
}
inline TraceIndex build_index(const trace::Trace& t) { return build_index(trace::compact_trace(t)); }
inline PosRange visible_range(const trace::Trace& t, const Track& track, int64_t t0, int64_t t1) {
  return visible_range(trace::compact_trace(t), track, t0, t1);
}
inline int64_t hit_test(const trace::Trace& t, const Track& track, int64_t t_ns, int64_t tolerance_ns) {
  return hit_test(trace::compact_trace(t), track, t_ns, tolerance_ns);
}
inline void kind_time(const trace::Trace& t, const Track& track, size_t first, size_t last, int64_t* by_kind) {
  kind_time(trace::compact_trace(t), track, first, last, by_kind);
}
inline TraceStats compute_stats(const trace::Trace& t) { return compute_stats(trace::compact_trace(t)); }
inline TraceStats compute_stats(const trace::Trace& t, const TraceIndex& index) {
  return compute_stats(trace::compact_trace(t), index);
}
inline std::vector<KernelRow> kernel_table(const trace::Trace& t, int64_t t0 = INT64_MIN, int64_t t1 = INT64_MAX) {
  return kernel_table(trace::compact_trace(t), t0, t1);
}
inline std::vector<uint32_t> longest_events(const trace::Trace& t, size_t n, int64_t t0 = INT64_MIN,
                                            int64_t t1 = INT64_MAX) {
  return longest_events(trace::compact_trace(t), n, t0, t1);
}
inline RangeStats range_stats(const trace::Trace& t, int64_t t0, int64_t t1, size_t longest_n = 50) {
  return range_stats(trace::compact_trace(t), t0, t1, longest_n);
}
inline std::vector<StepSpan> step_spans(const trace::Trace& t) { return step_spans(trace::compact_trace(t)); }
inline Overview overview(const trace::Trace& t, int64_t begin_ns, int64_t end_ns, size_t bins = 1024) {
  return overview(trace::compact_trace(t), begin_ns, end_ns, bins);
}
inline TrackDraw layout_track(const trace::Trace& t, const TraceIndex& index, uint32_t track, const Viewport& view,
                              const LayoutOptions& options) {
  return layout_track(trace::compact_trace(t), index, track, view, options);
}
inline std::vector<TrackDraw> layout_timeline(const trace::Trace& t, const TraceIndex& index, const Viewport& view,
                                              const LayoutOptions& options) {
  return layout_timeline(trace::compact_trace(t), index, view, options);
}
inline std::vector<trace::StreamBusy> indexed_stream_busy(const trace::Trace& t, const TraceIndex& index) {
  return indexed_stream_busy(trace::compact_trace(t), index);
}
inline trace::OverlapReport indexed_overlap(const trace::Trace& t, const TraceIndex& index) {
  return indexed_overlap(trace::compact_trace(t), index);
}
inline trace::CriticalPath indexed_critical_path(const trace::Trace& t, const TraceIndex& index) {
  return indexed_critical_path(trace::compact_trace(t), index);
}

}  // namespace sl::gui
