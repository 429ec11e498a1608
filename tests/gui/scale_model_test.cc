// The compact storage behind large runs: a store-ordered trace indexes as
// spans without per-event tables, and every index query (positions,
// visible ranges, hit tests, kind sums, waits) and the merged blocks of the
// timeline agree with a naive computation over the events; a run loaded
// through the model keeps every field of every event.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "app/gui/layout/indexed_analysis.h"
#include "app/gui/layout/timeline_layout.h"
#include "app/gui/layout/track_index.h"
#include "app/gui/model/app_state.h"
#include "tests/gui/gui_test_util.h"

namespace sl::gui {
namespace {

using testing::save_trace;
using testing::ScratchDir;
using trace::EventKind;

// Random events on 2 devices x 3 streams, grouped by track in start order
// (the store's order) unless `shuffle`; some overlap on one stream.
trace::Trace random_trace(size_t n, bool shuffle, uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  trace::Trace t;
  const int streams[] = {0, 1, 100};
  std::vector<uint32_t> names;
  for (int i = 0; i < 9; ++i) names.push_back(t.strings.intern("kernel_" + std::to_string(i)));
  for (int d = 0; d < 2; ++d) {
    for (int s : streams) {
      int64_t at = static_cast<int64_t>(rng() % 100);
      for (size_t i = 0; i < n / 6; ++i) {
        trace::Event e;
        e.device = d;
        e.stream = s;
        e.stream_kind = sched::stream_kind(s);
        e.kind = static_cast<EventKind>(rng() % kKinds);
        e.name = names[rng() % names.size()];
        e.instruction = t.strings.intern("op." + std::to_string(rng() % 50));
        e.start_ns = at;
        e.end_ns = at + (rng() % 20 == 0 ? 50000 : static_cast<int64_t>(rng() % 900));  // a few long ones
        e.bytes = static_cast<int64_t>(rng() % 100000);
        e.flops = static_cast<int64_t>(rng() % 3) * 1000;
        e.correlation = static_cast<int64_t>(t.events.size()) * 3 + 1;
        e.iteration = static_cast<int32_t>(i / 100);
        at += static_cast<int64_t>(rng() % 700);  // often before the previous end: overlaps
        t.events.push_back(e);
      }
    }
  }
  if (shuffle) std::shuffle(t.events.begin(), t.events.end(), rng);
  for (uint32_t i = 0; i + 7 < t.events.size(); i += 5) t.dependencies.push_back({i, i + 7});
  return t;
}

// Positions of track `t` in the naive order: its events sorted by (start, index).
template <typename AnyTrace>
std::vector<uint32_t> naive_order(const AnyTrace& trace, const Track& t) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < trace.events.size(); ++i) {
    if (trace.events[i].device == t.device && trace.events[i].stream == t.stream) out.push_back(i);
  }
  std::stable_sort(out.begin(), out.end(),
                   [&](uint32_t a, uint32_t b) { return trace.events[a].start_ns < trace.events[b].start_ns; });
  return out;
}

template <typename AnyTrace>
void expect_index_matches_naive(const AnyTrace& trace, const TraceIndex& idx) {
  size_t total = 0;
  for (uint32_t t = 0; t < idx.tracks.size(); ++t) {
    const Track& track = idx.tracks[t];
    std::vector<uint32_t> order = naive_order(trace, track);
    ASSERT_EQ(track.size(), order.size());
    total += order.size();
    int64_t max_end = INT64_MIN;
    for (size_t p = 0; p < order.size(); ++p) {
      const auto& e = trace.events[order[p]];
      ASSERT_EQ(track.event(p), order[p]) << "track " << t << " position " << p;
      EXPECT_EQ(idx.track_of(order[p]), t);
      EXPECT_EQ(idx.pos_of(order[p]), p);
      EXPECT_EQ(start_at(trace, track, p), e.start_ns);
      EXPECT_EQ(end_at(trace, track, p), std::max(e.start_ns, e.end_ns));
      max_end = std::max(max_end, end_at(trace, track, p));
      EXPECT_EQ(track.max_end_ns[p], max_end);
    }
    // Kind sums of any span of positions.
    std::mt19937 rng(t);
    for (int k = 0; k < 50; ++k) {
      size_t a = rng() % (order.size() + 1), b = rng() % (order.size() + 1);
      if (a > b) std::swap(a, b);
      int64_t fast[kKinds], naive[kKinds] = {};
      kind_time(trace, track, a, b, fast);
      for (size_t p = a; p < b; ++p) {
        const auto& e = trace.events[order[p]];
        naive[static_cast<size_t>(e.kind)] += std::max<int64_t>(0, e.end_ns - e.start_ns);
      }
      for (size_t kk = 0; kk < kKinds; ++kk) EXPECT_EQ(fast[kk], naive[kk]) << "positions " << a << ".." << b;
    }
    // The two-level search equals a plain upper_bound over the running maximum.
    for (int k = 0; k < 200; ++k) {
      size_t a = rng() % (order.size() + 1), b = rng() % (order.size() + 1);
      if (a > b) std::swap(a, b);
      const int64_t at = static_cast<int64_t>(rng() % 400000) - 1000;
      const size_t want = static_cast<size_t>(
          std::upper_bound(track.max_end_ns.begin() + static_cast<std::ptrdiff_t>(a),
                           track.max_end_ns.begin() + static_cast<std::ptrdiff_t>(b), at) -
          track.max_end_ns.begin());
      EXPECT_EQ(first_max_end_after(track, a, b, at), want) << a << ".." << b << " after " << at;
    }
    // Every event that intersects [t0, t1] is inside the visible range.
    for (int k = 0; k < 20; ++k) {
      int64_t t0 = static_cast<int64_t>(rng() % 400000), t1 = t0 + static_cast<int64_t>(rng() % 20000);
      PosRange r = visible_range(trace, track, t0, t1);
      for (size_t p = 0; p < order.size(); ++p) {
        const auto& e = trace.events[order[p]];
        if (e.start_ns <= t1 && std::max(e.start_ns, e.end_ns) >= t0) {
          EXPECT_TRUE(p >= r.first && p < r.last) << "event " << order[p] << " missing from " << t0 << ".." << t1;
        }
      }
      // A hit inside an event returns an event that covers the time.
      int64_t h = hit_test(trace, track, t0, 0);
      if (h >= 0) {
        const auto& e = trace.events[static_cast<size_t>(h)];
        EXPECT_TRUE(e.start_ns <= t0 && std::max(e.start_ns, e.end_ns) >= t0);
      }
    }
  }
  EXPECT_EQ(total, trace.events.size());
  for (uint32_t e = 0; e < trace.events.size(); e += 13) {
    std::vector<uint32_t> in, out;
    for (const auto& d : trace.dependencies) {
      if (d.to == e) in.push_back(d.from);
      if (d.from == e) out.push_back(d.to);
    }
    EXPECT_EQ(waits_of(idx, e), in);  // in the order recorded
    EXPECT_EQ(waited_by(idx, e), out);
  }
}

TEST(ScaleIndex, GroupedTraceNeedsNoPerEventTables) {
  trace::Trace t = random_trace(6000, false);
  TraceIndex idx = build_index(t);
  ASSERT_EQ(idx.tracks.size(), 6u);
  for (const Track& track : idx.tracks) EXPECT_TRUE(track.order.empty());
  EXPECT_TRUE(idx.track_table_.empty());
  EXPECT_TRUE(idx.pos_table_.empty());
  expect_index_matches_naive(t, idx);
}

TEST(ScaleIndex, ShuffledTraceKeepsPositionsAndAgreesWithNaive) {
  trace::Trace t = random_trace(6000, true);
  TraceIndex idx = build_index(t);
  ASSERT_EQ(idx.tracks.size(), 6u);
  EXPECT_FALSE(idx.track_table_.empty());
  expect_index_matches_naive(t, idx);
}

// A track whose events are grouped but not in start order is not a span.
TEST(ScaleIndex, GroupedButUnsortedTrackFallsBackToTables) {
  trace::Trace t;
  testing::add_event(t, 0, 0, EventKind::kGemm, "a", "a", 50, 60);
  testing::add_event(t, 0, 0, EventKind::kGemm, "b", "b", 10, 20);
  TraceIndex idx = build_index(t);
  EXPECT_EQ(idx.tracks[0].event(0), 1u);
  EXPECT_EQ(idx.pos_of(0), 1u);
}

// The merged blocks (LOD) at any zoom: every visible event is in exactly one
// rect, a merged block's kind is the one with the most time over its events
// and its density their busy time over its span.
TEST(ScaleLayout, MergedBlocksAgreeWithNaiveSums) {
  trace::Trace t = random_trace(30000, false);
  TraceIndex idx = build_index(t);
  LayoutOptions options;
  options.width_px = 800;
  const int64_t span = idx.end_ns - idx.begin_ns;
  for (int64_t div : {1, 7, 100, 3000}) {
    Viewport view{idx.begin_ns + span / 3, idx.begin_ns + span / 3 + span / div};
    for (uint32_t tr = 0; tr < idx.tracks.size(); ++tr) {
      const Track& track = idx.tracks[tr];
      TrackDraw draw = layout_track(t, idx, tr, view, options);
      size_t covered = 0;
      size_t next_pos = 0;
      for (const DrawRect& r : draw.rects) {
        ASSERT_GE(r.event, 0);
        const size_t p = idx.pos_of(static_cast<uint32_t>(r.event));
        EXPECT_GE(p, next_pos) << "rects overlap in positions";
        next_pos = p + r.merged;
        covered += r.merged;
        if (r.merged < 2) continue;
        int64_t naive[kKinds] = {};
        int64_t busy = 0;
        for (size_t q = p; q < p + r.merged; ++q) {
          const trace::Event& e = t.events[track.event(q)];
          naive[static_cast<size_t>(e.kind)] += std::max<int64_t>(0, e.end_ns - e.start_ns);
          busy += std::max<int64_t>(0, e.end_ns - e.start_ns);
        }
        size_t best = static_cast<size_t>(t.events[track.event(p)].kind);
        for (size_t k = 0; k < kKinds; ++k) {
          if (naive[k] > naive[best]) best = k;
        }
        EXPECT_EQ(static_cast<size_t>(r.kind), best);
        // The block ends at its own last end, or later where the running
        // maximum (which an earlier long event can raise) absorbed it.
        int64_t own_end = 0;
        for (size_t q = p; q < p + r.merged; ++q) own_end = std::max(own_end, end_at(t, track, q));
        const int64_t max_end = std::max(own_end, track.max_end_ns[p + r.merged - 1]);
        auto density = [&](int64_t end) {
          return std::clamp(static_cast<double>(busy) / static_cast<double>(std::max<int64_t>(1, end - start_at(t, track, p))),
                            0.0, 1.0);
        };
        EXPECT_GE(r.density, density(max_end) - 1e-4);
        EXPECT_LE(r.density, density(own_end) + 1e-4);
      }
      // Events of the visible range not drawn are those hidden under an
      // earlier long event (ending before the view).
      PosRange range = visible_range(t, track, view.start_ns, view.end_ns);
      size_t hidden = 0;
      for (size_t p = range.first; p < range.last; ++p) hidden += end_at(t, track, p) < view.start_ns;
      EXPECT_LE(covered, range.last - range.first);
      EXPECT_GE(covered + hidden, range.last - range.first);
    }
  }
}

// Statistics over the index equal core/trace/analysis.h's over the events.
void expect_stats_match_core(const trace::Trace& t) {
  TraceIndex idx = build_index(t);
  std::vector<trace::StreamBusy> busy = trace::stream_busy_time(t), fast = indexed_stream_busy(t, idx);
  ASSERT_EQ(busy.size(), fast.size());
  for (size_t i = 0; i < busy.size(); ++i) {
    EXPECT_EQ(busy[i].device, fast[i].device);
    EXPECT_EQ(busy[i].stream, fast[i].stream);
    EXPECT_EQ(busy[i].stream_kind, fast[i].stream_kind);
    EXPECT_EQ(busy[i].event_count, fast[i].event_count);
    EXPECT_EQ(busy[i].busy_ns, fast[i].busy_ns) << "track " << i;
  }
  trace::OverlapReport o = trace::compute_communication_overlap(t), f = indexed_overlap(t, idx);
  ASSERT_EQ(o.devices.size(), f.devices.size());
  for (size_t i = 0; i < o.devices.size(); ++i) {
    EXPECT_EQ(o.devices[i].device, f.devices[i].device);
    EXPECT_EQ(o.devices[i].compute_ns, f.devices[i].compute_ns);
    EXPECT_EQ(o.devices[i].communication_ns, f.devices[i].communication_ns);
    EXPECT_EQ(o.devices[i].overlap_ns, f.devices[i].overlap_ns);
  }
  EXPECT_EQ(o.overlap_ns, f.overlap_ns);
  EXPECT_DOUBLE_EQ(o.ratio, f.ratio);
  trace::CriticalPath c = trace::critical_path(t), fc = indexed_critical_path(t, idx);
  EXPECT_EQ(c.events, fc.events);
  EXPECT_EQ(c.busy_ns, fc.busy_ns);
  EXPECT_EQ(c.start_ns, fc.start_ns);
  EXPECT_EQ(c.end_ns, fc.end_ns);
}

TEST(ScaleStats, IndexedAnalysisEqualsCore) {
  expect_stats_match_core(random_trace(6000, false));
  expect_stats_match_core(random_trace(6000, true, 11));
  expect_stats_match_core(testing::known_trace());
  // Equal starts on one stream, zero-length and reversed events, a self-wait.
  trace::Trace t;
  testing::add_event(t, 0, 0, EventKind::kGemm, "a", "a", 10, 50);
  testing::add_event(t, 0, 0, EventKind::kGemm, "b", "b", 10, 30);
  testing::add_event(t, 0, 0, EventKind::kMemset, "c", "c", 60, 60);
  testing::add_event(t, 0, 100, EventKind::kCollective, "d", "d", 20, 70);
  testing::add_event(t, 1, 0, EventKind::kWait, "w", "w", 5, 1);
  t.dependencies.push_back({3, 2});
  t.dependencies.push_back({1, 2});
  t.dependencies.push_back({2, 2});
  expect_stats_match_core(t);
}

// Loaded through the model from a store: grouped, so no per-event tables,
// and every field of every event as saved: bytes, flops and correlation
// read from the store on demand (event_extras), the rest held.
TEST(ScaleModel, LoadedRunKeepsEveryFieldAndIndexesAsSpans) {
  ScratchDir dir;
  const std::string db = dir.file("scale.db");
  trace::Trace saved = random_trace(3000, false);
  const int64_t run = save_trace(db, saved);
  AppState state;
  state.services = default_services();
  apply(state, OpenDatabase{db});
  apply(state, OpenRun{run});
  wait_for_job(state);
  ASSERT_TRUE(state.has_run()) << state.message.text;
  const trace::CompactTrace& loaded = state.current->trace;
  ASSERT_EQ(loaded.events.size(), saved.events.size());
  EXPECT_TRUE(state.current->index.track_table_.empty());
  // The store returns (device, stream, start) order; saved is already in it
  // except for equal starts, which keep their order.
  for (size_t i = 0; i < saved.events.size(); ++i) {
    const trace::Event& a = saved.events[i];
    const trace::EventRef b = loaded.events[i];
    ASSERT_EQ(a.device, b.device) << i;
    EXPECT_EQ(a.stream, b.stream);
    EXPECT_EQ(a.stream_kind, b.stream_kind);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(saved.name_of(a), loaded.name_of(b));
    EXPECT_EQ(saved.instruction_of(a), loaded.instruction_of(b));
    EXPECT_EQ(a.start_ns, b.start_ns);
    EXPECT_EQ(a.end_ns, b.end_ns);
    EXPECT_EQ(a.iteration, b.iteration);
    const auto extras = event_extras(state, *state.current, static_cast<uint32_t>(i));
    ASSERT_TRUE(extras.has_value()) << i;
    EXPECT_EQ(a.bytes, extras->bytes);
    EXPECT_EQ(a.flops, extras->flops);
    EXPECT_EQ(a.correlation, extras->correlation);
  }
  ASSERT_EQ(loaded.dependencies.size(), saved.dependencies.size());
  expect_index_matches_naive(loaded, state.current->index);
}

}  // namespace
}  // namespace sl::gui
