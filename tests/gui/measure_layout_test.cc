// The GUI's measuring and statistics geometry (issue 22): exact times,
// relative ruler labels at deep zoom, middle-shortened names, merged blocks
// coloured by their dominant kind, the sortable kernel table, the longest
// events, range statistics, step spans, the overview and compare alignment.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "app/gui/layout/colors.h"
#include "app/gui/layout/compare.h"
#include "app/gui/layout/kernel_table.h"
#include "app/gui/layout/ruler.h"
#include "app/gui/layout/stats.h"
#include "app/gui/layout/time_format.h"
#include "app/gui/layout/timeline_layout.h"
#include "app/gui/layout/track_index.h"
#include "tests/gui/gui_test_util.h"

namespace sl::gui {
namespace {

using testing::add_event;
using trace::EventKind;

TEST(TimeFormat, DetailsShowEveryNanosecond) {
  // The reproduction: an 89 µs kernel at 7.15 s.
  EXPECT_EQ(format_time_exact(7150123456), "7.150 123 456 s");
  EXPECT_EQ(format_time_exact(7150212579), "7.150 212 579 s");
  EXPECT_EQ(format_duration_exact(89123), "89.123 \xC2\xB5s");
  EXPECT_EQ(format_time_exact(0), "0.000 000 000 s");
  EXPECT_EQ(format_time_exact(-10), "-0.000 000 010 s");
  EXPECT_EQ(format_time_exact(12345000000000), "12 345.000 000 000 s");
  EXPECT_EQ(format_duration_exact(812), "812 ns");
  EXPECT_EQ(format_duration_exact(3000000), "3.000 000 ms");
  EXPECT_EQ(format_duration_exact(1240000017), "1.240 000 017 s");
  EXPECT_EQ(format_duration_exact(-1500), "-1.500 \xC2\xB5s");
  EXPECT_EQ(format_time_us(2130255999), "2.130 255 s");
  EXPECT_EQ(group_digits(1969380), "1 969 380");
  EXPECT_EQ(format_time_exact(INT64_MIN).substr(0, 1), "-");  // no overflow at the extreme
}

TEST(Ruler, DeepZoomLabelsAreRelativeToTheView) {
  // 2 µs of view at 1.969 s: absolute labels would read "1969380 µs".
  const Viewport v{1969380000, 1969382000};
  Ruler r = make_ruler(v, 1000, 90);
  ASSERT_TRUE(r.relative);
  EXPECT_LE(r.origin_ns, v.start_ns);
  EXPECT_GT(r.origin_ns + r.major_step_ns, v.start_ns);
  for (const RulerTick& t : r.ticks) {
    if (!t.major) continue;
    EXPECT_EQ(t.label.substr(0, 1), "+") << t.label;
    EXPECT_LE(t.label.size(), 10u) << t.label;
  }
  // The first major tick inside the view counts from the origin.
  const RulerTick* first = nullptr;
  for (const RulerTick& t : r.ticks) {
    if (t.major && first == nullptr) first = &t;
  }
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->label, fmt::format("+{} ns", first->t_ns - r.origin_ns));
  // Near 0 the labels stay absolute.
  EXPECT_FALSE(make_ruler({0, 1000000}, 1000, 90).relative);
  EXPECT_FALSE(make_ruler({0, 2240000000}, 1000, 90).relative);
}

TEST(Labels, NamesAreShortenedInTheMiddle) {
  const std::string name = "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_TNN";
  const std::string s = shorten_middle(name, 20);
  EXPECT_EQ(s.size(), 22u);
  EXPECT_EQ(s.substr(0, 10), "nvjet_hsh_");
  EXPECT_EQ(s.substr(10, 2), "..");
  EXPECT_EQ(s.substr(s.size() - 10), "_coopA_TNN");  // the distinguishing end survives
  EXPECT_EQ(shorten_middle("short", 20), "short");
  // A UTF-8 sequence is never cut in half.
  const std::string utf = "ab\xC2\xB5\xC2\xB5\xC2\xB5\xC2\xB5\xC2\xB5xyz";
  const std::string cut = shorten_middle(utf, 6);
  for (size_t i = 0; i < cut.size(); ++i) {
    if ((static_cast<unsigned char>(cut[i]) & 0xC0) == 0x80) {
      ASSERT_GT(i, 0u);
      EXPECT_NE(static_cast<unsigned char>(cut[i - 1]) & 0x80, 0) << "orphan continuation byte at " << i;
    }
  }
}

TEST(Labels, LinkedRunsAreLabelledByInstruction) {
  trace::Trace t;
  add_event(t, 0, 0, EventKind::kGemm, "nvjet_hsh_128x256", "dot.3", 0, 100);
  add_event(t, 0, 0, EventKind::kOther, "stream_executor::gpu::DelayKernel", "", 200, 300);
  const trace::CompactTrace c = trace::compact_trace(t);
  EXPECT_EQ(label_text(c, c.events[0], true), "dot.3");
  EXPECT_EQ(label_text(c, c.events[0], false), "nvjet_hsh_128x256");
  EXPECT_EQ(label_text(c, c.events[1], true), "stream_executor::gpu::DelayKernel");  // no instruction: its name
}

// The reproduction: a block of a capture drawn as memset although
// memsets are 3 ms of its 1.24 s. Its first event is a memset; the rest is
// GEMM time.
TEST(Layout, MergedBlockTakesItsDominantKindByTime) {
  trace::Trace t;
  int64_t time = 0;
  for (int i = 0; i < 3000; ++i) {
    const bool memset = i % 10 == 0;
    const int64_t d = memset ? 1000 : 400000;
    add_event(t, 0, 0, memset ? EventKind::kMemset : EventKind::kGemm, memset ? "memset" : "gemm", "", time, time + d);
    time += d + 10;
  }
  TraceIndex idx = build_index(t);
  LayoutOptions o;
  o.width_px = 200;  // 6 ms a pixel: everything merges
  TrackDraw d = layout_track(t, idx, 0, {0, time}, o);
  ASSERT_EQ(d.rects.size(), 1u);
  const DrawRect& r = d.rects[0];
  EXPECT_GT(r.merged, 1u);
  EXPECT_EQ(t.events[static_cast<size_t>(r.event)].kind, EventKind::kMemset);  // the first event...
  EXPECT_EQ(r.kind, EventKind::kGemm);                                           // ...is not the colour
  EXPECT_EQ(r.color, merged_color(EventKind::kGemm, r.density));
  EXPECT_GT(r.density, 0.99f);
  EXPECT_LE(d.weighed, 2 * kKindChunk);  // bounded cost per block, not 3000 events
  // A sparse block is darker than a dense one.
  const Rgb dense = unpack_rgb(merged_color(EventKind::kGemm, 1.0));
  const Rgb sparse = unpack_rgb(merged_color(EventKind::kGemm, 0.1));
  EXPECT_LT(sparse.b, dense.b);
  EXPECT_LT(dense.b, kind_rgb(EventKind::kGemm).b);
}

trace::Trace kernels_trace() {
  trace::Trace t;
  // "a": 3 calls (10, 20, 90 ns) = 120; "b": 2 calls (50, 60) = 110; "c": one of 100.
  add_event(t, 0, 0, EventKind::kGemm, "a", "a0", 0, 10);
  add_event(t, 0, 0, EventKind::kGemm, "a", "a1", 100, 120);
  add_event(t, 0, 0, EventKind::kGemm, "a", "a2", 200, 290);
  add_event(t, 0, 1, EventKind::kCopy, "b", "b0", 0, 50);
  add_event(t, 0, 1, EventKind::kCopy, "b", "b1", 300, 360);
  add_event(t, 0, 1, EventKind::kOther, "c", "c0", 400, 500);
  return t;
}

// A capture keeps CUDA's stream ids: stream 120 can be a compute stream and
// stream 13 an NCCL one. Tracks take the kind the events carry.
TEST(TrackIndex, CaptureStreamsKeepTheirIdsAndTheirEventsKind) {
  trace::Trace t;
  add_event(t, 0, 120, EventKind::kGemm, "nvjet_hsh_128x256", "", 0, 100);
  add_event(t, 0, 13, EventKind::kCollective, "ncclDevKernel_AllReduce", "", 0, 100);
  t.events[0].stream_kind = trace::StreamKind::kCompute;
  t.events[1].stream_kind = trace::StreamKind::kCommunication;
  TraceIndex idx = build_index(t);
  ASSERT_EQ(idx.tracks.size(), 2u);
  EXPECT_EQ(track_label(idx.tracks[0]), "dev 0 comm 13");
  EXPECT_EQ(track_label(idx.tracks[1]), "dev 0 stream 120");
}

// The per-kind prefix sums give exact times for any range of positions.
TEST(TrackIndex, KindTimeIsExactForAnyRange) {
  trace::Trace t;
  const EventKind kinds[] = {EventKind::kGemm, EventKind::kMemset, EventKind::kCopy};
  for (int i = 0; i < 100; ++i) add_event(t, 0, 0, kinds[i % 3], "k", "", i * 100, i * 100 + 1 + i);
  TraceIndex idx = build_index(t);
  const Track& track = idx.tracks[0];
  for (size_t first : {0u, 1u, 15u, 16u, 17u, 40u}) {
    for (size_t last : {first, first + 1, size_t{32}, size_t{47}, size_t{64}, size_t{99}, size_t{100}}) {
      if (last < first) continue;
      int64_t got[kKinds] = {}, want[kKinds] = {};
      kind_time(t, track, first, last, got);
      for (size_t p = first; p < last; ++p) {
        want[static_cast<size_t>(t.events[track.event(p)].kind)] += end_at(t, track, p) - start_at(t, track, p);
      }
      for (size_t k = 0; k < kKinds; ++k) EXPECT_EQ(got[k], want[k]) << first << ".." << last << " kind " << k;
    }
  }
}

TEST(KernelTable, RowsCarryCountTotalShareMedianMinMaxAndLongestCall) {
  trace::Trace t = kernels_trace();
  std::vector<KernelRow> rows = kernel_table(t);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "a");  // by total, largest first
  EXPECT_EQ(rows[0].count, 3);
  EXPECT_EQ(rows[0].total_ns, 120);
  EXPECT_EQ(rows[0].median_ns, 20);
  EXPECT_EQ(rows[0].min_ns, 10);
  EXPECT_EQ(rows[0].max_ns, 90);
  EXPECT_DOUBLE_EQ(rows[0].mean_ns, 40);
  EXPECT_NEAR(rows[0].share, 120.0 / 330.0, 1e-12);
  EXPECT_EQ(rows[0].longest_event, 2);
  EXPECT_EQ(rows[1].name, "b");
  EXPECT_EQ(rows[1].median_ns, 50);  // lower median of an even count
  EXPECT_EQ(rows[1].kind, EventKind::kCopy);
  EXPECT_EQ(rows[1].longest_event, 4);
}

// Durations are kept in 32 bits for the median unless a name has a longer
// one (over 4.29 s): both widths give the exact lower median.
TEST(KernelTable, MediansOfLongAndShortDurationsAreExact) {
  trace::Trace t;
  const int64_t s = 1000000000;  // 1 s
  add_event(t, 0, 0, EventKind::kGemm, "long", "", 0, 5 * s);
  add_event(t, 0, 0, EventKind::kGemm, "long", "", 5 * s, 7 * s);
  add_event(t, 0, 0, EventKind::kGemm, "long", "", 7 * s, 13 * s);
  add_event(t, 0, 1, EventKind::kGemm, "short", "", 0, 4 * s);
  add_event(t, 0, 1, EventKind::kGemm, "short", "", 4 * s, 4 * s + 7);
  std::vector<KernelRow> rows = kernel_table(t);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "long");
  EXPECT_EQ(rows[0].median_ns, 5 * s);
  EXPECT_EQ(rows[0].max_ns, 6 * s);
  EXPECT_EQ(rows[1].name, "short");
  EXPECT_EQ(rows[1].median_ns, 7);
  EXPECT_EQ(rows[1].max_ns, 4 * s);
}

TEST(KernelTable, SortsByEveryColumnBothWays) {
  std::vector<KernelRow> rows = kernel_table(kernels_trace());
  auto names = [&] {
    std::string out;
    for (const auto& r : rows) out += r.name;
    return out;
  };
  sort_kernel_rows(rows, KernelColumn::kCount, false);
  EXPECT_EQ(names(), "abc");
  sort_kernel_rows(rows, KernelColumn::kCount, true);
  EXPECT_EQ(names(), "cba");
  sort_kernel_rows(rows, KernelColumn::kMax, false);
  EXPECT_EQ(names(), "cab");
  sort_kernel_rows(rows, KernelColumn::kMin, true);
  EXPECT_EQ(names(), "abc");
  sort_kernel_rows(rows, KernelColumn::kMedian, false);
  EXPECT_EQ(names(), "cba");
  sort_kernel_rows(rows, KernelColumn::kMean, true);
  EXPECT_EQ(names(), "abc");
  sort_kernel_rows(rows, KernelColumn::kName, false);
  EXPECT_EQ(names(), "cba");
  sort_kernel_rows(rows, KernelColumn::kShare, false);
  EXPECT_EQ(names(), "abc");
  sort_kernel_rows(rows, KernelColumn::kTotal, true);
  EXPECT_EQ(names(), "cba");
}

TEST(KernelTable, LongestEventsAndRangeStatistics) {
  trace::Trace t = kernels_trace();
  std::vector<uint32_t> longest = longest_events(t, 3);
  EXPECT_EQ(longest, (std::vector<uint32_t>{5, 2, 4}));  // 100, 90, 60 ns
  EXPECT_EQ(longest_events(t, 100).size(), t.events.size());
  EXPECT_TRUE(longest_events(t, 0).empty());
  // Only events starting in [100, 350): a1, a2, b1.
  RangeStats r = range_stats(t, 350, 100);  // either order
  EXPECT_EQ(r.t0, 100);
  EXPECT_EQ(r.t1, 350);
  EXPECT_EQ(r.events, 3);
  EXPECT_EQ(r.busy_ns, 20 + 90 + 60);
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].name, "a");
  EXPECT_EQ(r.kernels[0].count, 2);
  EXPECT_EQ(r.longest.front(), 2u);
  EXPECT_EQ(range_stats(t, 1000, 2000).events, 0);
}

TEST(Steps, SpansOfNumberedStepsOnly) {
  trace::Trace t;
  add_event(t, 0, 0, EventKind::kOther, "autotune", "", 0, 50);
  add_event(t, 0, 0, EventKind::kGemm, "g", "g", 100, 200);
  add_event(t, 0, 1, EventKind::kGemm, "h", "h", 150, 260);
  add_event(t, 0, 0, EventKind::kGemm, "g", "g", 300, 400);
  t.events[0].iteration = -1;  // outside the steps
  t.events[1].iteration = 0;
  t.events[2].iteration = 0;
  t.events[3].iteration = 1;
  std::vector<StepSpan> steps = step_spans(t);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].step, 0);
  EXPECT_EQ(steps[0].start_ns, 100);
  EXPECT_EQ(steps[0].end_ns, 260);
  EXPECT_EQ(steps[1].start_ns, 300);
  // A single run (all iteration 0) has no markers.
  EXPECT_TRUE(step_spans(testing::known_trace()).empty());
}

TEST(Overview, BinsHoldBusyTimeAndTheirMainKind) {
  trace::Trace t;
  add_event(t, 0, 0, EventKind::kGemm, "g", "g", 0, 500);
  add_event(t, 0, 1, EventKind::kCopy, "c", "c", 400, 450);
  add_event(t, 0, 0, EventKind::kCollective, "ar", "ar", 750, 1000);
  Overview o = overview(t, 0, 1000, 4);
  ASSERT_EQ(o.bins.size(), 4u);
  EXPECT_EQ(o.bins[0].busy_ns, 250);
  EXPECT_EQ(o.bins[1].busy_ns, 250 + 50);
  EXPECT_EQ(o.bins[1].kind, EventKind::kGemm);
  EXPECT_EQ(o.bins[2].busy_ns, 0);
  EXPECT_EQ(o.bins[3].busy_ns, 250);
  EXPECT_EQ(o.bins[3].kind, EventKind::kCollective);
  EXPECT_EQ(o.max_busy_ns, 300);
  int64_t total = 0;
  for (const auto& b : o.bins) total += b.busy_ns;
  EXPECT_EQ(total, 500 + 50 + 250);  // every busy nanosecond lands in one bin
  TraceStats s = compute_stats(t);
  EXPECT_EQ(s.overview.bins.size(), 1024u);
  EXPECT_EQ(s.longest.front(), 0u);
  EXPECT_EQ(s.kernel_rows.size(), 3u);
}

TEST(CompareLayout, TracksAlignByDeviceAndStream) {
  trace::Trace base, cur;
  add_event(base, 0, 0, EventKind::kGemm, "g", "g", 0, 10);
  add_event(base, 0, 100, EventKind::kCollective, "ar", "ar", 0, 10);
  add_event(cur, 0, 0, EventKind::kGemm, "g", "g", 0, 10);
  add_event(cur, 0, 1, EventKind::kGemm, "h", "h", 0, 10);
  add_event(cur, 0, 100, EventKind::kCollective, "ar", "ar", 0, 10);
  std::vector<AlignedTrack> rows = align_tracks(build_index(base), build_index(cur));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].stream, 0);
  EXPECT_EQ(rows[0].base_track, 0);
  EXPECT_EQ(rows[0].current_track, 0);
  EXPECT_EQ(rows[1].stream, 1);
  EXPECT_EQ(rows[1].base_track, -1);  // new in the current run
  EXPECT_EQ(rows[1].current_track, 1);
  EXPECT_EQ(rows[2].stream, 100);
  EXPECT_EQ(rows[2].base_track, 1);
  EXPECT_EQ(rows[2].current_track, 2);
}

// A simulated run (stream 0) against a capture of the same program (CUDA
// stream 14): no stream number in common, paired by the instructions.
TEST(CompareLayout, StreamsWithoutACommonNumberPairByTheirMatchedInstructions) {
  trace::Trace base, cur;
  add_event(base, 0, 0, EventKind::kGemm, "g", "g", 0, 10);
  add_event(base, 0, 0, EventKind::kGemm, "h", "h", 10, 20);
  add_event(base, 0, 3, EventKind::kGemm, "k", "k", 0, 5);  // only in the baseline
  add_event(cur, 0, 14, EventKind::kGemm, "g", "g", 0, 10);
  add_event(cur, 0, 14, EventKind::kGemm, "h", "h", 10, 21);
  trace::RunInfo ia, ib;
  ia.id = 1;
  ib.id = 2;
  const Comparison c = compare_for_view(ia, base, ib, cur);
  const TraceIndex bi = build_index(base), ci = build_index(cur);
  EXPECT_EQ(align_tracks(bi, ci).size(), 3u);  // by number alone: nothing lines up
  std::vector<AlignedTrack> rows = align_tracks(bi, ci, &c.summary);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].stream, 3);  // no partner: stays alone
  EXPECT_EQ(rows[0].current_track, -1);
  EXPECT_EQ(rows[1].stream, 14);
  EXPECT_EQ(rows[1].base_track, 0);  // the baseline's stream 0 above the capture's 14
  EXPECT_EQ(rows[1].current_track, 0);
}

TEST(CompareLayout, TheComparedIterationSpansItsEvents) {
  trace::Trace t;
  for (int32_t it = 0; it < 3; ++it) {
    t.events[add_event(t, 0, 0, EventKind::kGemm, "g", "g", 100 * it + 10, 100 * it + 30)].iteration = it;
    t.events[add_event(t, 0, 1, EventKind::kGemm, "h", "h", 100 * it + 20, 100 * it + 45)].iteration = it;
  }
  const trace::CompactTrace c = trace::compact_trace(t);
  const TimeSpan one = compared_span(c, 1, 10, 245);
  EXPECT_EQ(one.start_ns, 110);
  EXPECT_EQ(one.end_ns, 145);
  const TimeSpan all = compared_span(c, -1, 10, 245);  // one iteration compared: the whole run
  EXPECT_EQ(all.start_ns, 10);
  EXPECT_EQ(all.end_ns, 245);
  EXPECT_EQ(compared_span(c, 7, 10, 245).start_ns, 10);  // an iteration it lacks
}

TEST(CompareLayout, WarnsWhenTheProgramsDiffer) {
  trace::Trace a = testing::known_trace();
  trace::Trace b;
  for (int i = 0; i < 5; ++i) add_event(b, 0, 0, EventKind::kGemm, "other", fmt::format("x{}", i), i * 10, i * 10 + 5);
  trace::RunInfo ia, ib;
  ia.id = 1;
  ib.id = 2;
  Comparison same = compare_for_view(ia, a, ib, a);
  EXPECT_EQ(programs_differ(same), "");
  Comparison different = compare_for_view(ia, a, ib, b);
  const std::string why = programs_differ(different);
  EXPECT_NE(why.find("0 matched"), std::string::npos) << why;
}

}  // namespace
}  // namespace sl::gui
