#pragma once
// Per-track, start-sorted arrays over a Trace so the timeline can find the
// visible events of a track with a binary search (Tracy keeps its zones the
// same way). Built once when a run is opened; O(n log n), O(n) memory.

#include <cstdint>
#include <string>
#include <vector>

#include "core/trace/trace.h"

namespace sl::gui {

struct Track {
  int32_t device = 0;
  int32_t stream = 0;
  trace::StreamKind kind = trace::StreamKind::kCompute;
  std::vector<uint32_t> events;    // indices into Trace::events, sorted by start
  std::vector<int64_t> start_ns;   // parallel to `events`
  std::vector<int64_t> end_ns;
  std::vector<int64_t> max_end_ns; // prefix maximum of end_ns: monotonic, so searchable
  // Busy time per event kind before every kKindChunk-th position
  // (kind_prefix[c * kKinds + k]: kind k over positions [0, c * kKindChunk)),
  // so a merged block's time per kind is exact at O(kKindChunk) cost.
  std::vector<int64_t> kind_prefix;
};

constexpr size_t kKinds = static_cast<size_t>(trace::EventKind::kOther) + 1;
constexpr size_t kKindChunk = 16;

// Busy time per kind of positions [first, last) of `track`, into by_kind[kKinds].
void kind_time(const trace::Trace& trace, const Track& track, size_t first, size_t last, int64_t* by_kind);

// "dev 0 stream 1" / "dev 0 comm 100". The kind is the events' own: a
// capture keeps CUDA's stream ids, which say nothing about the kind.
std::string track_label(int32_t device, int32_t stream, trace::StreamKind kind);
std::string track_label(int32_t device, int32_t stream);  // kind from streamlens' numbering (sched/streams.h)
inline std::string track_label(const Track& t) { return track_label(t.device, t.stream, t.kind); }

struct TraceIndex {
  std::vector<Track> tracks;        // sorted by (device, stream)
  std::vector<uint32_t> track_of;   // per event
  std::vector<uint32_t> pos_of;     // per event: position inside its track
  // Dependencies as compressed rows: waits_in(e) = sources e waited for.
  std::vector<uint32_t> in_offsets, in_sources;
  std::vector<uint32_t> out_offsets, out_targets;
  int64_t begin_ns = 0;             // first start over all events
  int64_t end_ns = 0;               // last end over all events
  bool empty() const { return tracks.empty(); }
};

TraceIndex build_index(const trace::Trace& trace);

// Index of the track for (device, stream), or -1.
int find_track(const TraceIndex& index, int32_t device, int32_t stream);

// Positions [first, last) inside `track` of events that may intersect
// [t0, t1]: O(log n). Events inside the range that end before t0 (possible
// only where events on one stream overlap) are not excluded.
struct PosRange {
  size_t first = 0;
  size_t last = 0;
};
PosRange visible_range(const Track& track, int64_t t0, int64_t t1);

// The event of `track` under time `t_ns`, or the nearest one within
// `tolerance_ns`; -1 when none. O(log n).
int64_t hit_test(const Track& track, int64_t t_ns, int64_t tolerance_ns);

// Sources / targets of the waits of event `e`.
std::vector<uint32_t> waits_of(const TraceIndex& index, uint32_t e);
std::vector<uint32_t> waited_by(const TraceIndex& index, uint32_t e);

}  // namespace sl::gui
