#include "app/gui/layout/indexed_analysis.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <utility>

namespace sl::gui {
namespace {

using trace::saturating_add;
using trace::saturating_sub;

// The union of the wanted events of some tracks, as disjoint intervals in
// time order: a k-way merge of the tracks' start-sorted positions.
class UnionStream {
 public:
  using Want = bool (*)(const trace::EventRef&);
  UnionStream(const trace::CompactTrace& trace, const TraceIndex& index, const std::vector<uint32_t>& tracks, Want want)
      : trace_(trace), index_(index), want_(want) {
    for (uint32_t t : tracks) push_next(t, 0);
  }

  // The next interval, or false when none is left.
  bool next(int64_t* s, int64_t* e) {
    if (heap_.empty()) return false;
    Cursor c = pop();
    *s = c.start;
    *e = c.end;
    while (!heap_.empty() && heap_.top().start <= *e) {
      Cursor d = pop();
      *e = std::max(*e, d.end);
    }
    return true;
  }

 private:
  struct Cursor {
    int64_t start, end;
    uint32_t track;
    size_t pos;
    bool operator>(const Cursor& o) const { return start > o.start; }
  };
  // Pushes the first wanted, non-empty event of `track` at or after `pos`.
  void push_next(uint32_t t, size_t pos) {
    const Track& track = index_.tracks[t];
    for (; pos < track.size(); ++pos) {
      const trace::EventRef& e = trace_.events[track.event(pos)];
      const int64_t start = start_at(trace_, track, pos), end = end_at(trace_, track, pos);
      if (end > start && want_(e)) {
        heap_.push({start, end, t, pos});
        return;
      }
    }
  }
  Cursor pop() {
    Cursor c = heap_.top();
    heap_.pop();
    push_next(c.track, c.pos + 1);
    return c;
  }
  const trace::CompactTrace& trace_;
  const TraceIndex& index_;
  Want want_;
  std::priority_queue<Cursor, std::vector<Cursor>, std::greater<>> heap_;
};

bool any_event(const trace::EventRef&) { return true; }
// core/trace/analysis.h's is_compute_event / is_communication_event on a compact event.
bool is_compute(const trace::EventRef& e) {
  trace::Event full;
  full.kind = e.kind;
  full.stream_kind = e.stream_kind;
  return trace::is_compute_event(full);
}
bool is_communication(const trace::EventRef& e) { return e.kind == trace::EventKind::kCollective; }

// Total length of a stream's intervals and of its intersection with another's.
int64_t total(UnionStream& u) {
  int64_t sum = 0, s = 0, e = 0;
  while (u.next(&s, &e)) sum = saturating_add(sum, saturating_sub(e, s));
  return sum;
}

int64_t intersection(UnionStream& a, UnionStream& b) {
  int64_t sum = 0, as = 0, ae = 0, bs = 0, be = 0;
  bool ha = a.next(&as, &ae), hb = b.next(&bs, &be);
  while (ha && hb) {
    const int64_t lo = std::max(as, bs), hi = std::min(ae, be);
    if (hi > lo) sum = saturating_add(sum, saturating_sub(hi, lo));
    if (ae < be) {
      ha = a.next(&as, &ae);
    } else {
      hb = b.next(&bs, &be);
    }
  }
  return sum;
}

// The event before `pos` on its stream in core's order, (start, end, index),
// or kNone: the index orders equal starts by index alone, so only a group of
// equal starts (nearly always one event) is looked at.
uint32_t stream_prev(const trace::CompactTrace& trace, const Track& track, size_t pos, uint32_t none) {
  const auto& ev = trace.events;
  auto key = [&](size_t p) {
    const uint32_t e = track.event(p);
    return std::make_pair(ev[e].end_ns, e);
  };
  const int64_t start = start_at(trace, track, pos);
  size_t g0 = pos, g1 = pos + 1;
  while (g0 > 0 && start_at(trace, track, g0 - 1) == start) --g0;
  while (g1 < track.size() && start_at(trace, track, g1) == start) ++g1;
  // The largest key below this event's within its group, else the largest of the previous group.
  size_t best = SIZE_MAX;
  for (size_t p = g0; p < g1; ++p) {
    if (key(p) < key(pos) && (best == SIZE_MAX || key(p) > key(best))) best = p;
  }
  if (best != SIZE_MAX) return track.event(best);
  if (g0 == 0) return none;
  const int64_t prev_start = start_at(trace, track, g0 - 1);
  best = g0 - 1;
  for (size_t p = g0 - 1; p > 0 && start_at(trace, track, p - 1) == prev_start; --p) {
    if (key(p - 1) > key(best)) best = p - 1;
  }
  return track.event(best);
}

}  // namespace

std::vector<trace::StreamBusy> indexed_stream_busy(const trace::CompactTrace& trace, const TraceIndex& index) {
  std::vector<trace::StreamBusy> out;
  for (uint32_t t = 0; t < index.tracks.size(); ++t) {
    const Track& track = index.tracks[t];
    trace::StreamBusy busy;
    busy.device = track.device;
    busy.stream = track.stream;
    busy.stream_kind = track.kind;
    busy.event_count = static_cast<int64_t>(track.size());
    UnionStream u(trace, index, {t}, any_event);
    busy.busy_ns = total(u);
    out.push_back(busy);
  }
  return out;
}

trace::OverlapReport indexed_overlap(const trace::CompactTrace& trace, const TraceIndex& index) {
  std::map<int32_t, std::vector<uint32_t>> by_device;
  for (uint32_t t = 0; t < index.tracks.size(); ++t) by_device[index.tracks[t].device].push_back(t);
  trace::OverlapReport report;
  for (const auto& [device, tracks] : by_device) {
    UnionStream compute(trace, index, tracks, is_compute);
    UnionStream comm(trace, index, tracks, is_communication);
    // Core lists a device only when it has a compute or communication event.
    bool listed = false;
    for (uint32_t t : tracks) {
      const Track& track = index.tracks[t];
      for (size_t p = 0; p < track.size() && !listed; ++p) {
        const trace::EventRef& e = trace.events[track.event(p)];
        listed = is_compute(e) || is_communication(e);
      }
    }
    if (!listed) continue;
    trace::DeviceOverlap d;
    d.device = device;
    d.compute_ns = total(compute);
    d.communication_ns = total(comm);
    UnionStream a(trace, index, tracks, is_compute);
    UnionStream b(trace, index, tracks, is_communication);
    d.overlap_ns = intersection(a, b);
    d.ratio = d.communication_ns > 0 ? static_cast<double>(d.overlap_ns) / static_cast<double>(d.communication_ns)
                                     : 0.0;
    report.compute_ns = saturating_add(report.compute_ns, d.compute_ns);
    report.communication_ns = saturating_add(report.communication_ns, d.communication_ns);
    report.overlap_ns = saturating_add(report.overlap_ns, d.overlap_ns);
    report.devices.push_back(d);
  }
  if (report.communication_ns > 0) {
    report.ratio = static_cast<double>(report.overlap_ns) / static_cast<double>(report.communication_ns);
  }
  return report;
}

trace::CriticalPath indexed_critical_path(const trace::CompactTrace& trace, const TraceIndex& index) {
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  return trace::walk_critical_path(trace.events, [&](uint32_t cur, const std::function<void(uint32_t)>& consider) {
    // Waits first, in the order they were recorded, then the previous event
    // of the stream (core's order, which decides ties).
    for (uint32_t p : waits_of(index, cur)) consider(p);
    const uint32_t prev = stream_prev(trace, index.tracks[index.track_of(cur)], index.pos_of(cur), kNone);
    if (prev != kNone) consider(prev);
  });
}

}  // namespace sl::gui
