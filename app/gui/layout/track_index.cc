#include "app/gui/layout/track_index.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

namespace sl::gui {

std::string track_label(int32_t device, int32_t stream, trace::StreamKind kind) {
  if (kind == trace::StreamKind::kCommunication) return fmt::format("dev {} comm {}", device, stream);
  return fmt::format("dev {} stream {}", device, stream);
}

std::string track_label(int32_t device, int32_t stream) { return track_label(device, stream, sched::stream_kind(stream)); }

namespace {

// The track of every event, assigned in (device, stream) order.
std::vector<uint32_t> assign_tracks(const trace::EventColumns& events, TraceIndex* index) {
  std::map<std::pair<int32_t, int32_t>, uint32_t> ids;
  for (const auto& e : events) ids.emplace(std::make_pair(e.device, e.stream), 0);
  index->tracks.resize(ids.size());
  uint32_t next = 0;
  for (auto& [key, id] : ids) {
    id = next++;
    index->tracks[id].device = key.first;
    index->tracks[id].stream = key.second;
  }
  std::vector<uint32_t> track_of(events.size());
  // Consecutive events usually share a track (stores return them in track order).
  std::pair<int32_t, int32_t> last_key{events[0].device, events[0].stream};
  uint32_t last_id = ids[last_key];
  std::vector<uint8_t> seen(index->tracks.size(), 0);
  for (size_t i = 0; i < events.size(); ++i) {
    std::pair<int32_t, int32_t> key{events[i].device, events[i].stream};
    if (key != last_key) {
      last_key = key;
      last_id = ids[key];
    }
    track_of[i] = last_id;
    if (!seen[last_id]) {
      seen[last_id] = 1;
      index->tracks[last_id].kind = events[i].stream_kind;
      index->tracks[last_id].first = static_cast<uint32_t>(i);
    }
  }
  return track_of;
}

// A track's order: by start, then event index (a store's (start, seq) order).
bool before(const trace::EventColumns& events, uint32_t a, uint32_t b) {
  return events[a].start_ns != events[b].start_ns ? events[a].start_ns < events[b].start_ns : a < b;
}

// When every track is one run of consecutive events in start order (a
// store's trace), its tracks as spans, without any per-event table; false
// otherwise (gives up early on traces with many runs).
bool index_as_spans(const trace::EventColumns& events, TraceIndex* index, std::vector<size_t>* counts) {
  constexpr size_t kMaxRuns = size_t{1} << 16;
  struct Run {
    int32_t device, stream;
    uint32_t first;
    size_t count;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < events.size(); ++i) {
    const trace::EventRef& e = events[i];
    if (runs.empty() || e.device != runs.back().device || e.stream != runs.back().stream) {
      if (runs.size() == kMaxRuns) return false;
      runs.push_back({e.device, e.stream, static_cast<uint32_t>(i), 0});
    } else if (e.start_ns < events[i - 1].start_ns) {
      return false;
    }
    ++runs.back().count;
  }
  std::sort(runs.begin(), runs.end(),
            [](const Run& a, const Run& b) { return std::tie(a.device, a.stream) < std::tie(b.device, b.stream); });
  for (size_t k = 1; k < runs.size(); ++k) {
    if (runs[k].device == runs[k - 1].device && runs[k].stream == runs[k - 1].stream) return false;
  }
  index->tracks.resize(runs.size());
  counts->resize(runs.size());
  for (size_t k = 0; k < runs.size(); ++k) {
    Track& t = index->tracks[k];
    t.device = runs[k].device;
    t.stream = runs[k].stream;
    t.kind = events[runs[k].first].stream_kind;
    t.first = runs[k].first;
    (*counts)[k] = runs[k].count;
  }
  index->spans_.resize(runs.size());
  std::iota(index->spans_.begin(), index->spans_.end(), 0u);
  std::sort(index->spans_.begin(), index->spans_.end(),
            [&](uint32_t a, uint32_t b) { return index->tracks[a].first < index->tracks[b].first; });
  return true;
}

void fill_track(const trace::CompactTrace& trace, Track& track, size_t m) {
  track.max_end_ns.resize(m);
  int64_t max_end = std::numeric_limits<int64_t>::min();
  const size_t chunks = m / kKindChunk;
  track.kind_prefix.assign((chunks + 1) * kKinds, 0);
  int64_t running[kKinds] = {};
  for (size_t p = 0; p < m; ++p) {
    const int64_t start = start_at(trace, track, p), end = end_at(trace, track, p);
    max_end = std::max(max_end, end);
    track.max_end_ns[p] = max_end;
    if (p % kKindChunk == 0) std::copy_n(running, kKinds, &track.kind_prefix[p / kKindChunk * kKinds]);
    running[static_cast<size_t>(trace.events.kind(track.event(p)))] += end - start;
  }
  if (m % kKindChunk == 0) std::copy_n(running, kKinds, &track.kind_prefix[chunks * kKinds]);
  track.max_end_coarse.clear();
  for (size_t p = kCoarse - 1; p < m; p += kCoarse) track.max_end_coarse.push_back(track.max_end_ns[p]);
  if (m % kCoarse != 0) track.max_end_coarse.push_back(track.max_end_ns[m - 1]);
}

// First position of `track` starting after t: O(log n) over the events.
size_t first_after(const trace::CompactTrace& trace, const Track& track, int64_t t) {
  size_t lo = 0, hi = track.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (start_at(trace, track, mid) <= t) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace

TraceIndex build_index(const trace::CompactTrace& trace) {
  TraceIndex index;
  const auto& events = trace.events;
  const size_t n = events.size();
  if (n == 0) return index;

  std::vector<size_t> counts;
  if (!index_as_spans(events, &index, &counts)) {
    index.tracks.clear();
    std::vector<uint32_t> track_of = assign_tracks(events, &index);
    counts.assign(index.tracks.size(), 0);
    for (uint32_t t : track_of) ++counts[t];
    for (size_t t = 0; t < index.tracks.size(); ++t) index.tracks[t].order.reserve(counts[t]);
    for (size_t i = 0; i < n; ++i) index.tracks[track_of[i]].order.push_back(static_cast<uint32_t>(i));
    index.pos_table_.assign(n, 0);
    for (auto& track : index.tracks) {
      auto by_start = [&](uint32_t a, uint32_t b) { return before(events, a, b); };
      if (!std::is_sorted(track.order.begin(), track.order.end(), by_start)) {
        std::sort(track.order.begin(), track.order.end(), by_start);
      }
      for (size_t p = 0; p < track.order.size(); ++p) index.pos_table_[track.order[p]] = static_cast<uint32_t>(p);
    }
    index.track_table_ = std::move(track_of);
  }

  index.begin_ns = std::numeric_limits<int64_t>::max();
  index.end_ns = std::numeric_limits<int64_t>::min();
  for (size_t t = 0; t < index.tracks.size(); ++t) {
    Track& track = index.tracks[t];
    fill_track(trace, track, counts[t]);
    index.begin_ns = std::min(index.begin_ns, start_at(trace, track, 0));
    index.end_ns = std::max(index.end_ns, track.max_end_ns.back());
  }
  for (const auto& d : trace.dependencies) {
    if (d.from < n && d.to < n) index.by_to.push_back(d);
  }
  // Stable, so the waits of one event keep the order they were recorded in.
  index.by_from = index.by_to;
  std::stable_sort(index.by_to.begin(), index.by_to.end(),
                   [](const trace::Dependency& a, const trace::Dependency& b) { return a.to < b.to; });
  std::stable_sort(index.by_from.begin(), index.by_from.end(),
                   [](const trace::Dependency& a, const trace::Dependency& b) { return a.from < b.from; });
  return index;
}

uint32_t TraceIndex::track_of(uint32_t e) const {
  if (!track_table_.empty()) return e < track_table_.size() ? track_table_[e] : 0;
  auto it = std::upper_bound(spans_.begin(), spans_.end(), e,
                             [&](uint32_t event, uint32_t t) { return event < tracks[t].first; });
  return it == spans_.begin() ? 0 : *(it - 1);
}

uint32_t TraceIndex::pos_of(uint32_t e) const {
  if (!pos_table_.empty()) return e < pos_table_.size() ? pos_table_[e] : 0;
  if (tracks.empty()) return 0;
  return e - tracks[track_of(e)].first;
}

int find_track(const TraceIndex& index, int32_t device, int32_t stream) {
  auto it = std::lower_bound(index.tracks.begin(), index.tracks.end(), std::make_pair(device, stream),
                             [](const Track& t, const std::pair<int32_t, int32_t>& key) {
                               return std::make_pair(t.device, t.stream) < key;
                             });
  if (it == index.tracks.end() || it->device != device || it->stream != stream) return -1;
  return static_cast<int>(it - index.tracks.begin());
}

size_t first_max_end_after(const Track& track, size_t from, size_t to, int64_t t) {
  to = std::min(to, track.size());
  if (from >= to) return to;
  const auto& coarse = track.max_end_coarse;
  // The group holding the answer: the first whose last running maximum exceeds t.
  auto group = static_cast<size_t>(
      std::upper_bound(coarse.begin() + static_cast<std::ptrdiff_t>(from / kCoarse), coarse.end(), t) - coarse.begin());
  const size_t lo = std::max(from, group * kCoarse);
  if (lo >= to) return to;
  const size_t hi = std::min(to, (group + 1) * kCoarse);
  auto it = std::upper_bound(track.max_end_ns.begin() + static_cast<std::ptrdiff_t>(lo),
                             track.max_end_ns.begin() + static_cast<std::ptrdiff_t>(hi), t);
  return static_cast<size_t>(it - track.max_end_ns.begin());
}

PosRange visible_range(const trace::CompactTrace& trace, const Track& track, int64_t t0, int64_t t1) {
  // First event whose running maximum end reaches t0: everything before ends earlier.
  auto first = static_cast<std::ptrdiff_t>(
      t0 == std::numeric_limits<int64_t>::min() ? 0 : first_max_end_after(track, 0, track.size(), t0 - 1));
  // One past the last event starting at or before t1.
  auto last = static_cast<std::ptrdiff_t>(first_after(trace, track, t1));
  if (last < first) last = first;
  return {static_cast<size_t>(first), static_cast<size_t>(last)};
}

int64_t hit_test(const trace::CompactTrace& trace, const Track& track, int64_t t_ns, int64_t tolerance_ns) {
  if (track.empty()) return -1;
  auto upto = static_cast<int64_t>(first_after(trace, track, t_ns + tolerance_ns));
  int64_t best = -1;
  int64_t best_distance = std::numeric_limits<int64_t>::max();
  // Walk back over candidates; stop once no earlier event can reach t - tolerance.
  constexpr int kMaxSteps = 256;
  int steps = 0;
  for (int64_t p = upto - 1; p >= 0 && steps < kMaxSteps; --p, ++steps) {
    if (track.max_end_ns[p] < t_ns - tolerance_ns) break;
    int64_t s = start_at(trace, track, static_cast<size_t>(p));
    int64_t e = end_at(trace, track, static_cast<size_t>(p));
    int64_t distance = t_ns < s ? s - t_ns : (t_ns > e ? t_ns - e : 0);
    if (distance < best_distance) {
      best_distance = distance;
      best = p;
    }
  }
  if (best < 0 || best_distance > tolerance_ns) return -1;
  return track.event(static_cast<size_t>(best));
}

void kind_time(const trace::CompactTrace& trace, const Track& track, size_t first, size_t last, int64_t* by_kind) {
  std::fill_n(by_kind, kKinds, 0);
  auto scan = [&](size_t from, size_t to) {
    for (size_t p = from; p < to; ++p) {
      by_kind[static_cast<size_t>(trace.events.kind(track.event(p)))] += end_at(trace, track, p) - start_at(trace, track, p);
    }
  };
  const size_t c0 = (first + kKindChunk - 1) / kKindChunk, c1 = last / kKindChunk;
  if (c0 >= c1 || track.kind_prefix.size() < (c1 + 1) * kKinds) return scan(first, last);
  scan(first, c0 * kKindChunk);
  for (size_t k = 0; k < kKinds; ++k) by_kind[k] += track.kind_prefix[c1 * kKinds + k] - track.kind_prefix[c0 * kKinds + k];
  scan(c1 * kKindChunk, last);
}

std::vector<uint32_t> waits_of(const TraceIndex& index, uint32_t e) {
  auto [lo, hi] = std::equal_range(index.by_to.begin(), index.by_to.end(), trace::Dependency{0, e},
                                   [](const trace::Dependency& a, const trace::Dependency& b) { return a.to < b.to; });
  std::vector<uint32_t> out;
  for (auto it = lo; it != hi; ++it) out.push_back(it->from);
  return out;
}

std::vector<uint32_t> waited_by(const TraceIndex& index, uint32_t e) {
  auto [lo, hi] = std::equal_range(index.by_from.begin(), index.by_from.end(), trace::Dependency{e, 0},
                                   [](const trace::Dependency& a, const trace::Dependency& b) { return a.from < b.from; });
  std::vector<uint32_t> out;
  for (auto it = lo; it != hi; ++it) out.push_back(it->to);
  return out;
}

}  // namespace sl::gui
