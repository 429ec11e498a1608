#include "app/gui/layout/compare.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace sl::gui {

std::vector<AlignedTrack> align_tracks(const TraceIndex& base, const TraceIndex& current,
                                       const trace::Comparison* matched) {
  // Both track lists are sorted by (device, stream): merge them.
  std::vector<AlignedTrack> out;
  size_t i = 0, j = 0;
  while (i < base.tracks.size() || j < current.tracks.size()) {
    AlignedTrack a;
    const bool take_base = i < base.tracks.size();
    const bool take_current = j < current.tracks.size();
    auto key = [](const Track& t) { return std::make_pair(t.device, t.stream); };
    if (take_base && take_current && key(base.tracks[i]) == key(current.tracks[j])) {
      a.device = base.tracks[i].device;
      a.stream = base.tracks[i].stream;
      a.base_track = static_cast<int>(i++);
      a.current_track = static_cast<int>(j++);
    } else if (take_base && (!take_current || key(base.tracks[i]) < key(current.tracks[j]))) {
      a.device = base.tracks[i].device;
      a.stream = base.tracks[i].stream;
      a.base_track = static_cast<int>(i++);
    } else {
      a.device = current.tracks[j].device;
      a.stream = current.tracks[j].stream;
      a.current_track = static_cast<int>(j++);
    }
    out.push_back(a);
  }
  if (matched == nullptr) return out;
  // Rows with one side only: pair them by where their matched instructions
  // ran, the most shared pair first.
  std::map<std::tuple<int32_t, int32_t, int32_t>, int64_t> shared;  // (device, base stream, current stream)
  for (const trace::InstructionDelta& d : matched->deltas) {
    if (d.matched()) ++shared[{d.device, d.stream_a, d.stream_b}];
  }
  std::vector<std::pair<int64_t, std::tuple<int32_t, int32_t, int32_t>>> by_count;
  for (const auto& [k, n] : shared) by_count.emplace_back(-n, k);
  std::sort(by_count.begin(), by_count.end());
  for (const auto& [n, k] : by_count) {
    const auto [device, sa, sb] = k;
    auto lone = [&](bool base_side, int32_t stream) {
      return std::find_if(out.begin(), out.end(), [&](const AlignedTrack& a) {
        return a.device == device && a.stream == stream &&
               (base_side ? a.base_track >= 0 && a.current_track < 0 : a.current_track >= 0 && a.base_track < 0);
      });
    };
    auto b = lone(true, sa);
    auto c = lone(false, sb);
    if (b == out.end() || c == out.end()) continue;
    c->base_track = b->base_track;  // on the current run's row, where its stream sorts
    out.erase(b);
  }
  return out;
}

TimeSpan compared_span(const trace::CompactTrace& trace, int32_t iteration, int64_t begin_ns, int64_t end_ns) {
  if (iteration < 0) return {begin_ns, end_ns};
  TimeSpan span{INT64_MAX, INT64_MIN};
  for (const trace::EventRef& e : trace.events) {
    if (e.iteration != iteration) continue;
    span.start_ns = std::min(span.start_ns, e.start_ns);
    span.end_ns = std::max(span.end_ns, e.end_ns);
  }
  if (span.start_ns > span.end_ns) return {begin_ns, end_ns};
  return span;
}

std::string programs_differ(const Comparison& c) {
  const trace::Comparison& s = c.summary;
  const int64_t only = s.only_in_a + s.only_in_b;
  if (s.matched == 0 && only > 0) {
    return fmt::format("these runs share no instruction ({} matched, {} in one run only): different programs?",
                       s.matched, only);
  }
  if (only > s.matched) {
    return fmt::format("most instructions are in one run only ({} matched, {} not): are these the same program?",
                       s.matched, only);
  }
  return "";
}

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
