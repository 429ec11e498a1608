#include "app/gui/layout/track_index.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

#include <fmt/format.h>

namespace sl::gui {

std::string track_label(int32_t device, int32_t stream, trace::StreamKind kind) {
  if (kind == trace::StreamKind::kCommunication) return fmt::format("dev {} comm {}", device, stream);
  return fmt::format("dev {} stream {}", device, stream);
}

std::string track_label(int32_t device, int32_t stream) { return track_label(device, stream, sched::stream_kind(stream)); }

namespace {

void build_csr(size_t n, const std::vector<trace::Dependency>& deps, bool incoming, std::vector<uint32_t>* offsets,
               std::vector<uint32_t>* values) {
  offsets->assign(n + 1, 0);
  for (const auto& d : deps) {
    uint32_t key = incoming ? d.to : d.from;
    if (d.from < n && d.to < n) ++(*offsets)[key + 1];
  }
  std::partial_sum(offsets->begin(), offsets->end(), offsets->begin());
  values->assign(offsets->back(), 0);
  std::vector<uint32_t> fill(offsets->begin(), offsets->end() - 1);
  for (const auto& d : deps) {
    if (d.from >= n || d.to >= n) continue;
    uint32_t key = incoming ? d.to : d.from;
    (*values)[fill[key]++] = incoming ? d.from : d.to;
  }
}

}  // namespace

TraceIndex build_index(const trace::Trace& trace) {
  TraceIndex index;
  const auto& events = trace.events;
  const size_t n = events.size();
  index.track_of.assign(n, 0);
  index.pos_of.assign(n, 0);
  if (n == 0) return index;

  // Assign track ids in (device, stream) order.
  std::map<std::pair<int32_t, int32_t>, uint32_t> ids;
  for (const auto& e : events) ids.emplace(std::make_pair(e.device, e.stream), 0);
  index.tracks.resize(ids.size());
  uint32_t next = 0;
  for (auto& [key, id] : ids) {
    id = next++;
    index.tracks[id].device = key.first;
    index.tracks[id].stream = key.second;
    index.tracks[id].kind = trace::StreamKind::kCompute;
  }
  // Consecutive events usually share a track (stores return them in track order).
  std::pair<int32_t, int32_t> last_key{events[0].device, events[0].stream};
  uint32_t last_id = ids[last_key];
  std::vector<size_t> counts(index.tracks.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    std::pair<int32_t, int32_t> key{events[i].device, events[i].stream};
    if (key != last_key) {
      last_key = key;
      last_id = ids[key];
    }
    index.track_of[i] = last_id;
    if (counts[last_id]++ == 0) index.tracks[last_id].kind = events[i].stream_kind;
  }
  for (size_t t = 0; t < index.tracks.size(); ++t) index.tracks[t].events.reserve(counts[t]);
  for (size_t i = 0; i < n; ++i) index.tracks[index.track_of[i]].events.push_back(static_cast<uint32_t>(i));

  index.begin_ns = std::numeric_limits<int64_t>::max();
  index.end_ns = std::numeric_limits<int64_t>::min();
  for (auto& track : index.tracks) {
    auto by_start = [&](uint32_t a, uint32_t b) {
      return events[a].start_ns != events[b].start_ns ? events[a].start_ns < events[b].start_ns : a < b;
    };
    if (!std::is_sorted(track.events.begin(), track.events.end(), by_start)) {
      std::sort(track.events.begin(), track.events.end(), by_start);
    }
    const size_t m = track.events.size();
    track.start_ns.resize(m);
    track.end_ns.resize(m);
    track.max_end_ns.resize(m);
    int64_t max_end = std::numeric_limits<int64_t>::min();
    for (size_t p = 0; p < m; ++p) {
      const auto& e = events[track.events[p]];
      track.start_ns[p] = e.start_ns;
      track.end_ns[p] = std::max(e.end_ns, e.start_ns);
      max_end = std::max(max_end, track.end_ns[p]);
      track.max_end_ns[p] = max_end;
      index.pos_of[track.events[p]] = static_cast<uint32_t>(p);
    }
    const size_t chunks = m / kKindChunk;
    track.kind_prefix.assign((chunks + 1) * kKinds, 0);
    int64_t running[kKinds] = {};
    for (size_t p = 0; p < m; ++p) {
      if (p % kKindChunk == 0) std::copy_n(running, kKinds, &track.kind_prefix[p / kKindChunk * kKinds]);
      running[static_cast<size_t>(events[track.events[p]].kind)] += track.end_ns[p] - track.start_ns[p];
    }
    if (m % kKindChunk == 0) std::copy_n(running, kKinds, &track.kind_prefix[chunks * kKinds]);
    index.begin_ns = std::min(index.begin_ns, track.start_ns.front());
    index.end_ns = std::max(index.end_ns, max_end);
  }
  build_csr(n, trace.dependencies, true, &index.in_offsets, &index.in_sources);
  build_csr(n, trace.dependencies, false, &index.out_offsets, &index.out_targets);
  return index;
}

int find_track(const TraceIndex& index, int32_t device, int32_t stream) {
  auto it = std::lower_bound(index.tracks.begin(), index.tracks.end(), std::make_pair(device, stream),
                             [](const Track& t, const std::pair<int32_t, int32_t>& key) {
                               return std::make_pair(t.device, t.stream) < key;
                             });
  if (it == index.tracks.end() || it->device != device || it->stream != stream) return -1;
  return static_cast<int>(it - index.tracks.begin());
}

PosRange visible_range(const Track& track, int64_t t0, int64_t t1) {
  // First event whose running maximum end reaches t0: everything before ends earlier.
  auto first = std::lower_bound(track.max_end_ns.begin(), track.max_end_ns.end(), t0) - track.max_end_ns.begin();
  // One past the last event starting at or before t1.
  auto last = std::upper_bound(track.start_ns.begin(), track.start_ns.end(), t1) - track.start_ns.begin();
  if (last < first) last = first;
  return {static_cast<size_t>(first), static_cast<size_t>(last)};
}

int64_t hit_test(const Track& track, int64_t t_ns, int64_t tolerance_ns) {
  if (track.events.empty()) return -1;
  auto upto = std::upper_bound(track.start_ns.begin(), track.start_ns.end(), t_ns + tolerance_ns) -
              track.start_ns.begin();
  int64_t best = -1;
  int64_t best_distance = std::numeric_limits<int64_t>::max();
  // Walk back over candidates; stop once no earlier event can reach t - tolerance.
  constexpr int kMaxSteps = 256;
  int steps = 0;
  for (int64_t p = upto - 1; p >= 0 && steps < kMaxSteps; --p, ++steps) {
    if (track.max_end_ns[p] < t_ns - tolerance_ns) break;
    int64_t s = track.start_ns[p];
    int64_t e = track.end_ns[p];
    int64_t distance = t_ns < s ? s - t_ns : (t_ns > e ? t_ns - e : 0);
    if (distance < best_distance) {
      best_distance = distance;
      best = p;
    }
  }
  if (best < 0 || best_distance > tolerance_ns) return -1;
  return track.events[static_cast<size_t>(best)];
}

void kind_time(const trace::Trace& trace, const Track& track, size_t first, size_t last, int64_t* by_kind) {
  std::fill_n(by_kind, kKinds, 0);
  auto scan = [&](size_t from, size_t to) {
    for (size_t p = from; p < to; ++p) {
      by_kind[static_cast<size_t>(trace.events[track.events[p]].kind)] += track.end_ns[p] - track.start_ns[p];
    }
  };
  const size_t c0 = (first + kKindChunk - 1) / kKindChunk, c1 = last / kKindChunk;
  if (c0 >= c1 || track.kind_prefix.size() < (c1 + 1) * kKinds) return scan(first, last);
  scan(first, c0 * kKindChunk);
  for (size_t k = 0; k < kKinds; ++k) by_kind[k] += track.kind_prefix[c1 * kKinds + k] - track.kind_prefix[c0 * kKinds + k];
  scan(c1 * kKindChunk, last);
}

std::vector<uint32_t> waits_of(const TraceIndex& index, uint32_t e) {
  if (e + 1 >= index.in_offsets.size()) return {};
  return {index.in_sources.begin() + index.in_offsets[e], index.in_sources.begin() + index.in_offsets[e + 1]};
}

std::vector<uint32_t> waited_by(const TraceIndex& index, uint32_t e) {
  if (e + 1 >= index.out_offsets.size()) return {};
  return {index.out_targets.begin() + index.out_offsets[e], index.out_targets.begin() + index.out_offsets[e + 1]};
}

}  // namespace sl::gui
