#pragma once
// Per-track, start-sorted arrays over a Trace so the timeline can find the
// visible events of a track with a binary search (Tracy keeps its zones the
// same way). Built once when a run is opened; O(n log n). A store's trace
// comes grouped by track in start order, so a track is then a span of
// Trace::events and the index costs 11.6 bytes an event (the running maximum
// end, its coarse level and the kind sums; starts and ends are read from the
// events); other traces also keep per-event positions.

#include <cstdint>
#include <string>
#include <vector>

#include "core/trace/compact_trace.h"

namespace sl::gui {

struct Track {
  int32_t device = 0;
  int32_t stream = 0;
  trace::StreamKind kind = trace::StreamKind::kCompute;
  // Position p is event first + p of Trace::events when `order` is empty
  // (a contiguous track), else event order[p].
  uint32_t first = 0;
  std::vector<uint32_t> order;
  // Positions are in order of start, then event index.
  std::vector<int64_t> max_end_ns; // prefix maximum of end_at(): monotonic, so searchable
  // max_end_ns at the last position of every kCoarse positions: a search
  // looks here first (it stays in cache), then inside one group.
  std::vector<int64_t> max_end_coarse;
  // Busy time per event kind before every kKindChunk-th position
  // (kind_prefix[c * kKinds + k]: kind k over positions [0, c * kKindChunk)),
  // so a merged block's time per kind is exact at O(kKindChunk) cost.
  std::vector<int64_t> kind_prefix;
  size_t size() const { return max_end_ns.size(); }
  bool empty() const { return max_end_ns.empty(); }
  uint32_t event(size_t p) const { return order.empty() ? first + static_cast<uint32_t>(p) : order[p]; }
};

// Start and end (never before the start) of position p of `track`.
inline int64_t start_at(const trace::CompactTrace& trace, const Track& track, size_t p) {
  return trace.events.start_ns(track.event(p));
}
inline int64_t end_at(const trace::CompactTrace& trace, const Track& track, size_t p) {
  const uint32_t e = track.event(p);
  const int64_t start = trace.events.start_ns(e), end = trace.events.end_ns(e);
  return end > start ? end : start;
}

constexpr size_t kCoarse = 64;

// The first position in [from, to) whose running maximum end exceeds t
// (`to` if none): upper_bound over max_end_ns through max_end_coarse.
size_t first_max_end_after(const Track& track, size_t from, size_t to, int64_t t);

constexpr size_t kKinds = static_cast<size_t>(trace::EventKind::kOther) + 1;
constexpr size_t kKindChunk = 16;

// Busy time per kind of positions [first, last) of `track`, into by_kind[kKinds].
void kind_time(const trace::CompactTrace& trace, const Track& track, size_t first, size_t last, int64_t* by_kind);

// "dev 0 stream 1" / "dev 0 comm 100". The kind is the events' own: a
// capture keeps CUDA's stream ids, which say nothing about the kind.
std::string track_label(int32_t device, int32_t stream, trace::StreamKind kind);
std::string track_label(int32_t device, int32_t stream);  // kind from streamlens' numbering (sched/streams.h)
inline std::string track_label(const Track& t) { return track_label(t.device, t.stream, t.kind); }

struct TraceIndex {
  std::vector<Track> tracks;        // sorted by (device, stream)
  // Dependencies sorted by target (waits_of) and by source (waited_by),
  // each keeping the recorded order among equals.
  std::vector<trace::Dependency> by_to, by_from;
  int64_t begin_ns = 0;             // first start over all events
  int64_t end_ns = 0;               // last end over all events
  bool empty() const { return tracks.empty(); }
  // The track of event e and its position there; O(log tracks) when every
  // track is contiguous, else a table look-up.
  uint32_t track_of(uint32_t e) const;
  uint32_t pos_of(uint32_t e) const;

  // Contiguous tracks by `first` (track ids); per-event tables otherwise.
  std::vector<uint32_t> spans_;
  std::vector<uint32_t> track_table_, pos_table_;
};

TraceIndex build_index(const trace::CompactTrace& trace);

// Index of the track for (device, stream), or -1.
int find_track(const TraceIndex& index, int32_t device, int32_t stream);

// Positions [first, last) inside `track` of events that may intersect
// [t0, t1]: O(log n). Events inside the range that end before t0 (possible
// only where events on one stream overlap) are not excluded.
struct PosRange {
  size_t first = 0;
  size_t last = 0;
};
PosRange visible_range(const trace::CompactTrace& trace, const Track& track, int64_t t0, int64_t t1);

// The event of `track` under time `t_ns`, or the nearest one within
// `tolerance_ns`; -1 when none. O(log n).
int64_t hit_test(const trace::CompactTrace& trace, const Track& track, int64_t t_ns, int64_t tolerance_ns);

// Sources / targets of the waits of event `e`.
std::vector<uint32_t> waits_of(const TraceIndex& index, uint32_t e);
std::vector<uint32_t> waited_by(const TraceIndex& index, uint32_t e);

}  // namespace sl::gui
