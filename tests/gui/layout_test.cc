// Layout: viewport math, ruler units, track index, merging of tiny events
// and its cost bound, hit testing, labels, comparison flags.

#include <gtest/gtest.h>


#include "app/gui/layout/colors.h"
#include "app/gui/layout/compare.h"
#include "app/gui/layout/ruler.h"
#include "app/gui/layout/stats.h"
#include "app/gui/layout/timeline_layout.h"
#include "app/gui/layout/track_index.h"
#include "app/gui/layout/viewport.h"
#include "tests/gui/gui_test_util.h"

namespace sl::gui {
namespace {

using testing::add_event;
using trace::EventKind;

TEST(Viewport, PixelTimeRoundTrip) {
  Viewport v{1000, 2000};
  EXPECT_DOUBLE_EQ(v.ns_per_px(100), 10.0);
  EXPECT_FLOAT_EQ(v.to_px(1500, 100), 50.0f);
  EXPECT_EQ(v.to_ns(50, 100), 1500);
  EXPECT_FLOAT_EQ(v.to_px(900, 100), -10.0f);
}

TEST(Viewport, ZoomKeepsAnchorInPlace) {
  Viewport v{0, 1000};
  Viewport z = zoom_at(v, 0.5, 250);
  EXPECT_EQ(z.span_ns(), 500);
  EXPECT_NEAR(z.to_px(250, 100), v.to_px(250, 100), 0.01);
  Viewport out = zoom_at(z, 2.0, 250);
  EXPECT_EQ(out.start_ns, 0);
  EXPECT_EQ(out.end_ns, 1000);
}

TEST(Viewport, ZoomStopsAtMinimumSpan) {
  Viewport v{0, 100};
  for (int i = 0; i < 20; ++i) v = zoom_at(v, 0.1, 50);
  EXPECT_EQ(v.span_ns(), kMinSpanNs);
  EXPECT_LE(v.start_ns, 50);
  EXPECT_GE(v.end_ns, 50);
}

TEST(Viewport, PanAndFit) {
  EXPECT_EQ(pan_by({0, 100}, 30).start_ns, 30);
  EXPECT_EQ(pan_by({0, 100}, -30).end_ns, 70);
  Viewport f = fit_range(0, 1000);
  EXPECT_LT(f.start_ns, 0);
  EXPECT_GT(f.end_ns, 1000);
  EXPECT_LT(f.span_ns(), 1100);
  Viewport n = normalized(500, 100);
  EXPECT_EQ(n.start_ns, 100);
  EXPECT_EQ(n.end_ns, 500);
}

TEST(Ruler, NiceStepsAreOneTwoFive) {
  EXPECT_EQ(nice_step(0.3), 1);
  EXPECT_EQ(nice_step(3), 5);
  EXPECT_EQ(nice_step(11), 20);
  EXPECT_EQ(nice_step(999), 1000);
  EXPECT_EQ(nice_step(2000001), 5000000);
}

TEST(Ruler, UnitsFollowTheStep) {
  EXPECT_EQ(unit_for_step(500), TimeUnit::kNs);
  EXPECT_EQ(unit_for_step(2000), TimeUnit::kUs);
  EXPECT_EQ(unit_for_step(5000000), TimeUnit::kMs);
  EXPECT_EQ(unit_for_step(2000000000), TimeUnit::kS);
  EXPECT_EQ(format_duration(1570000), "1.57 ms");
  EXPECT_EQ(format_duration(820), "820 ns");
  EXPECT_EQ(format_duration(3200000000), "3.20 s");
  EXPECT_EQ(format_duration(25500), "25.5 \xC2\xB5s");
}

TEST(Ruler, TicksAcrossOneMillisecond) {
  Ruler r = make_ruler({0, 1000000}, 1000, 90);
  EXPECT_EQ(r.major_step_ns, 100000);
  EXPECT_EQ(r.unit, TimeUnit::kUs);
  std::vector<std::string> labels;
  for (const auto& t : r.ticks) {
    if (t.major) labels.push_back(t.label);
  }
  ASSERT_EQ(labels.size(), 11u);
  EXPECT_EQ(labels[0], "0 \xC2\xB5s");
  EXPECT_EQ(labels[3], "300 \xC2\xB5s");
  EXPECT_EQ(r.minor_step_ns, 20000);
  // Ticks are in order and inside the view.
  for (size_t i = 1; i < r.ticks.size(); ++i) EXPECT_GT(r.ticks[i].x, r.ticks[i - 1].x);
  // Zoomed in to 2 µs the unit becomes ns; zoomed out to 20 s it becomes s.
  EXPECT_EQ(make_ruler({0, 2000}, 1000).unit, TimeUnit::kNs);
  EXPECT_EQ(make_ruler({0, 20000000000}, 1000).unit, TimeUnit::kS);
}

TEST(TrackIndex, TracksSortedAndEventsByStart) {
  trace::Trace t;
  add_event(t, 1, 0, EventKind::kGemm, "k", "a", 50, 60);
  add_event(t, 0, 100, EventKind::kCollective, "c", "b", 0, 100);
  add_event(t, 0, 0, EventKind::kGemm, "k", "c", 30, 40);
  add_event(t, 0, 0, EventKind::kGemm, "k", "d", 10, 20);
  t.dependencies.push_back({1, 2});
  TraceIndex idx = build_index(t);
  ASSERT_EQ(idx.tracks.size(), 3u);
  EXPECT_EQ(idx.tracks[0].device, 0);
  EXPECT_EQ(idx.tracks[0].stream, 0);
  EXPECT_EQ(idx.tracks[1].stream, 100);
  EXPECT_EQ(idx.tracks[1].kind, trace::StreamKind::kCommunication);
  EXPECT_EQ(idx.tracks[2].device, 1);
  EXPECT_EQ(idx.tracks[0].order, (std::vector<uint32_t>{3, 2}));  // not grouped by track: positions are kept
  EXPECT_EQ(idx.tracks[0].event(0), 3u);
  EXPECT_EQ(idx.track_of(2), 0u);
  EXPECT_EQ(idx.pos_of(2), 1u);
  EXPECT_EQ(idx.begin_ns, 0);
  EXPECT_EQ(idx.end_ns, 100);
  EXPECT_EQ(waits_of(idx, 2), (std::vector<uint32_t>{1}));
  EXPECT_EQ(waited_by(idx, 1), (std::vector<uint32_t>{2}));
  EXPECT_TRUE(waits_of(idx, 0).empty());
  EXPECT_EQ(find_track(idx, 0, 100), 1);
  EXPECT_EQ(find_track(idx, 2, 0), -1);
  EXPECT_EQ(track_label(idx.tracks[1]), "dev 0 comm 100");
}

TEST(TrackIndex, VisibleRangeIncludesLongEventStartingBefore) {
  trace::Trace t;
  add_event(t, 0, 0, EventKind::kGemm, "long", "l", 0, 1000);
  add_event(t, 0, 0, EventKind::kGemm, "a", "a", 1000, 1100);
  add_event(t, 0, 0, EventKind::kGemm, "b", "b", 2000, 2100);
  TraceIndex idx = build_index(t);
  PosRange r = visible_range(t, idx.tracks[0], 500, 1050);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.last, 2u);
  r = visible_range(t, idx.tracks[0], 1500, 3000);
  EXPECT_EQ(r.first, 2u);
  EXPECT_EQ(r.last, 3u);
  r = visible_range(t, idx.tracks[0], 5000, 6000);
  EXPECT_EQ(r.first, r.last);
}

TEST(TrackIndex, HitTestFindsEventOrNearestWithinTolerance) {
  trace::Trace t;
  add_event(t, 0, 0, EventKind::kGemm, "a", "a", 100, 200);
  add_event(t, 0, 0, EventKind::kGemm, "b", "b", 300, 400);
  TraceIndex idx = build_index(t);
  EXPECT_EQ(hit_test(t, idx.tracks[0], 150, 0), 0);
  EXPECT_EQ(hit_test(t, idx.tracks[0], 350, 0), 1);
  EXPECT_EQ(hit_test(t, idx.tracks[0], 250, 10), -1);
  EXPECT_EQ(hit_test(t, idx.tracks[0], 295, 10), 1);
  EXPECT_EQ(hit_test(t, idx.tracks[0], 205, 10), 0);
}

TEST(Layout, WideEventsAreDrawnOneByOneWithKindColours) {
  trace::Trace t;
  add_event(t, 0, 0, EventKind::kGemm, "gemm", "g", 0, 100);
  add_event(t, 0, 0, EventKind::kCollective, "allgather", "ag", 200, 300);
  TraceIndex idx = build_index(t);
  LayoutOptions o;
  o.width_px = 1000;
  TrackDraw d = layout_track(t, idx, 0, {0, 1000}, o);
  ASSERT_EQ(d.rects.size(), 2u);
  EXPECT_FLOAT_EQ(d.rects[0].x0, 0);
  EXPECT_FLOAT_EQ(d.rects[0].x1, 100);
  EXPECT_EQ(d.rects[0].color, kind_color(EventKind::kGemm));
  EXPECT_EQ(d.rects[1].color, kind_color(EventKind::kCollective));
  EXPECT_NE(kind_color(EventKind::kGemm), kind_color(EventKind::kCollective));
  EXPECT_EQ(d.rects[0].merged, 1u);
  EXPECT_EQ(d.rects[0].label_chars, 4);  // "gemm" fits in 100 px
  EXPECT_FALSE(d.rects[0].label_truncated);
}

TEST(Layout, TinyNeighboursMergeIntoOneBlockAndGapsSplitBlocks) {
  trace::Trace t;
  // 1000 events of 10 ns with 10 ns gaps (0..20 µs), then a gap, then 500 more.
  for (int i = 0; i < 1000; ++i) add_event(t, 0, 0, EventKind::kElementwise, "e", "e", i * 20, i * 20 + 10);
  for (int i = 0; i < 500; ++i) add_event(t, 0, 0, EventKind::kCopy, "c", "c", 60000 + i * 20, 60000 + i * 20 + 10);
  TraceIndex idx = build_index(t);
  LayoutOptions o;
  o.width_px = 100;  // 1 px = 1000 ns over 0..100 µs: every event is far below 3 px
  TrackDraw d = layout_track(t, idx, 0, {0, 100000}, o);
  ASSERT_EQ(d.rects.size(), 2u);
  EXPECT_EQ(d.rects[0].merged, 1000u);
  EXPECT_EQ(d.rects[1].merged, 500u);
  EXPECT_EQ(d.rects[0].kind, EventKind::kElementwise);
  EXPECT_NEAR(d.rects[0].density, 0.5, 0.01);  // 10 ns busy of every 20
  EXPECT_EQ(d.rects[0].color, merged_color(EventKind::kElementwise, d.rects[0].density));
  EXPECT_NEAR(d.rects[0].x1, 19.99f, 0.01f);
  EXPECT_NEAR(d.rects[1].x0, 60.0f, 0.01f);
  EXPECT_EQ(d.rects[0].label_chars, 0);
  // Zoomed in so each event is about 10 px wide, nothing merges.
  TrackDraw z = layout_track(t, idx, 0, {0, 95}, o);
  EXPECT_EQ(z.rects.size(), 5u);
  for (const auto& r : z.rects) EXPECT_EQ(r.merged, 1u);
}

TEST(Layout, TinyEventNextToWideOneStaysSeparate) {
  trace::Trace t;
  add_event(t, 0, 0, EventKind::kElementwise, "tiny", "t", 0, 1);
  add_event(t, 0, 0, EventKind::kGemm, "wide", "w", 2, 500);
  TraceIndex idx = build_index(t);
  LayoutOptions o;
  o.width_px = 100;
  TrackDraw d = layout_track(t, idx, 0, {0, 1000}, o);
  ASSERT_EQ(d.rects.size(), 2u);
  EXPECT_EQ(d.rects[0].merged, 1u);
  EXPECT_GE(d.rects[0].x1 - d.rects[0].x0, 1.0f);  // a lone tiny event still shows one pixel
  EXPECT_EQ(d.rects[1].event, 1);
}

// The Tracy-style bound: a track's cost depends on the pixels, not the events.
TEST(Layout, MillionEventsCostIsBoundedByPixels) {
  trace::Trace t;
  t.events.reserve(1000000);
  int64_t time = 0;
  for (int i = 0; i < 1000000; ++i) {
    int64_t d = (i % 97 == 0) ? 5000 : 300;
    add_event(t, 0, i % 2 == 0 ? 0 : 1, EventKind::kGemm, "k", "i", time, time + d);
    if (i % 2 == 1) time += d + 50;
  }
  TraceIndex idx = build_index(t);
  LayoutOptions o;
  o.width_px = 1600;
  Viewport all = fit_range(idx.begin_ns, idx.end_ns);
  auto draws = layout_timeline(t, idx, all, o);
  size_t merged = 0;
  for (const auto& d : draws) {
    EXPECT_LE(d.visited, 4 * 1600u);
    EXPECT_LE(d.rects.size(), 1600u);
    for (const auto& r : d.rects) merged += r.merged;
  }
  EXPECT_EQ(merged, 1000000u);  // every event is accounted for by exactly one rect
  // Mid zoom: 1/100 of the run.
  Viewport mid{all.start_ns + all.span_ns() / 2, all.start_ns + all.span_ns() / 2 + all.span_ns() / 100};
  for (const auto& d : layout_timeline(t, idx, mid, o)) EXPECT_LE(d.visited, 4 * 1600u);
  // The bounded visit counts are what keeps it fast; its time is bench/gui's business.
}

TEST(Layout, LabelsOnlyWhenTheyFit) {
  LayoutOptions o;
  o.char_px = 7;
  o.label_pad_px = 4;
  bool truncated = false;
  EXPECT_EQ(fit_label(4, 36, o, &truncated), 4);  // 28 + 8 px
  EXPECT_FALSE(truncated);
  EXPECT_EQ(fit_label(20, 64, o, &truncated), 6);  // 8 chars of room: 6 + ".."
  EXPECT_TRUE(truncated);
  EXPECT_EQ(fit_label(20, 20, o, &truncated), 0);
}

TEST(Layout, HighlightedEventsAreFlagged) {
  trace::Trace t;
  add_event(t, 0, 0, EventKind::kGemm, "a", "a", 0, 100);
  add_event(t, 0, 0, EventKind::kGemm, "b", "b", 200, 300);
  TraceIndex idx = build_index(t);
  std::vector<uint8_t> flags{0, 1};
  LayoutOptions o;
  o.width_px = 1000;
  o.highlight = &flags;
  TrackDraw d = layout_track(t, idx, 0, {0, 1000}, o);
  ASSERT_EQ(d.rects.size(), 2u);
  EXPECT_FALSE(d.rects[0].highlighted);
  EXPECT_TRUE(d.rects[1].highlighted);
}

TEST(Compare, FlagsMovedAndSlowerInstructions) {
  trace::Trace base = testing::known_trace();
  trace::Trace cur = testing::known_trace();
  cur.events[2].stream = 2;                       // n0 moved to stream 2
  cur.events[1].end_ns += 50000;                  // add1 50 µs slower
  cur.events[0].end_ns += 10;                     // g0: noise
  trace::RunInfo a, b;
  a.id = 1;
  b.id = 2;
  Comparison c = compare_for_view(a, base, b, cur);
  ASSERT_EQ(c.current_changed.size(), cur.events.size());
  EXPECT_EQ(c.current_changed[2], 1);
  EXPECT_EQ(c.current_changed[1], 1);
  EXPECT_EQ(c.current_changed[0], 0);
  EXPECT_EQ(c.base_changed[2], 1);
  EXPECT_EQ(c.changed_count, 2);
  EXPECT_EQ(c.summary.makespan_delta_ns(), 50000);
  // Every delta points at the right events.
  for (size_t i = 0; i < c.summary.deltas.size(); ++i) {
    const auto& d = c.summary.deltas[i];
    ASSERT_GE(c.current_event[i], 0);
    EXPECT_EQ(cur.instruction_of(cur.events[static_cast<size_t>(c.current_event[i])]), d.instruction);
    EXPECT_EQ(base.instruction_of(base.events[static_cast<size_t>(c.base_event[i])]), d.instruction);
  }
}

TEST(Stats, UsesTraceAnalyses) {
  trace::Trace t = testing::known_trace();
  TraceStats s = compute_stats(t);
  EXPECT_EQ(s.makespan_ns, 1100000);
  ASSERT_EQ(s.streams.size(), 3u);
  EXPECT_EQ(s.streams[0].busy_ns, 1100000);
  EXPECT_DOUBLE_EQ(s.busy_fraction(s.streams[0]), 1.0);
  ASSERT_EQ(s.overlap.devices.size(), 1u);
  EXPECT_GT(s.overlap.overlap_ns, 0);
  ASSERT_FALSE(s.critical_path.events.empty());
  EXPECT_EQ(s.critical_path.events.back(), 1u);
  EXPECT_FALSE(s.kernels.empty());
  EXPECT_EQ(compute_stats(trace::Trace{}).events, 0);
}

}  // namespace
}  // namespace sl::gui
