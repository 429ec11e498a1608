// Median-iteration and per-launch views (core/trace/iterations.h), and
// compare of a measured-style run (several iterations, several kernels per
// launch) against a simulated-style one.

#include <gtest/gtest.h>

#include "core/trace/analysis.h"
#include "core/trace/compare.h"
#include "core/trace/iterations.h"
#include "tests/trace/trace_test_util.h"

namespace sl::trace {
namespace {

using testing::add_event;

// Three iterations of g0 (two kernels of one launch, correlation 7) then s;
// the iterations last 300, 500 and 400 ns, so the median is iteration 2.
Trace measured() {
  Trace t;
  const int64_t begin[3] = {1000, 2000, 3000};
  const int64_t length[3] = {300, 500, 400};
  for (int it = 0; it < 3; ++it) {
    int64_t b = begin[it];
    add_event(t, 0, 0, EventKind::kGemm, "sm90_gemm", "g0", b, b + 100);
    add_event(t, 0, 0, EventKind::kGemm, "splitk_reduce", "g0", b + 110, b + 150);
    add_event(t, 0, 1, EventKind::kElementwise, "add", "s", b + 200, b + length[it]);
    t.events[t.events.size() - 3].correlation = 7;
    t.events[t.events.size() - 2].correlation = 7;
    t.events[t.events.size() - 1].correlation = 9;
    for (size_t i = t.events.size() - 3; i < t.events.size(); ++i) t.events[i].iteration = it;
    t.dependencies.push_back({static_cast<uint32_t>(t.events.size() - 2), static_cast<uint32_t>(t.events.size() - 1)});
  }
  return t;
}

TEST(Iterations, ListsAndPicksTheMedianBySpan) {
  Trace t = measured();
  EXPECT_EQ(iterations_of(t), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(median_iteration(t), 2);
  EXPECT_EQ(median_iteration(Trace{}), -1);
}

TEST(Iterations, OneIterationIsRebasedAndKeepsItsDependencies) {
  Trace one = one_iteration(measured(), 1);
  ASSERT_EQ(one.events.size(), 3u);
  EXPECT_EQ(one.events[0].start_ns, 0);
  EXPECT_EQ(one.events[2].end_ns, 500);
  ASSERT_EQ(one.dependencies.size(), 1u);
  EXPECT_EQ(one.dependencies[0].from, 1u);
  EXPECT_EQ(one.dependencies[0].to, 2u);
  EXPECT_EQ(one.makespan_ns(), 500);
}

// Device 1 queued its part 700 ns late (host skew): each device's part
// starts at 0, and the iteration lasts as long as its longest device part.
TEST(Iterations, EachDeviceIsRebasedToItsOwnStart) {
  Trace t;
  add_event(t, 0, 0, EventKind::kGemm, "gemm", "g0", 1000, 1400);
  add_event(t, 1, 0, EventKind::kGemm, "gemm", "g0", 1700, 2000);
  add_event(t, 1, 0, EventKind::kElementwise, "add", "s", 2000, 2200);
  add_event(t, 0, 0, EventKind::kGemm, "gemm", "g0", 3000, 3600);  // iteration 1: no skew, 600 ns
  add_event(t, 1, 0, EventKind::kGemm, "gemm", "g0", 3000, 3300);
  for (size_t i = 3; i < t.events.size(); ++i) t.events[i].iteration = 1;
  Trace one = one_iteration(t, 0);
  ASSERT_EQ(one.events.size(), 3u);
  EXPECT_EQ(one.events[0].start_ns, 0);
  EXPECT_EQ(one.events[1].start_ns, 0);
  EXPECT_EQ(one.events[2].end_ns, 500);
  EXPECT_EQ(one.makespan_ns(), 500);  // not 1200: the skew is left out
  EXPECT_EQ(median_iteration(t), 0);  // 500 and 600 ns (not 1200 and 600): the lower median of two
}

TEST(Iterations, SingleIterationTraceIsItsOwnRepresentative) {
  Trace t;
  add_event(t, 0, 0, EventKind::kGemm, "gemm", "g0", 50, 150);
  Trace r = representative_iteration(t);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].start_ns, 50);  // not rebased
}

TEST(Iterations, KernelsOfOneLaunchBecomeOneSpan) {
  Trace spans = instruction_spans(one_iteration(measured(), 0));
  ASSERT_EQ(spans.events.size(), 2u);
  EXPECT_EQ(spans.instruction_of(spans.events[0]), "g0");
  EXPECT_EQ(spans.events[0].start_ns, 0);
  EXPECT_EQ(spans.events[0].end_ns, 150);
  ASSERT_EQ(spans.dependencies.size(), 1u);  // from the merged g0 to s
  EXPECT_EQ(spans.dependencies[0].from, 0u);
  EXPECT_EQ(spans.dependencies[0].to, 1u);
}

// A cuBLAS GEMM launch starts with a short memset: the span is still a GEMM,
// so it counts as compute beside a collective and names its kernel.
TEST(Iterations, ALaunchSpanTakesTheKindOfItsLongestKernel) {
  Trace t;
  add_event(t, 0, 0, EventKind::kMemset, "memset", "g0", 0, 1);
  add_event(t, 0, 0, EventKind::kGemm, "nvjet_gemm", "g0", 3, 100);
  add_event(t, 0, 100, EventKind::kCollective, "ncclAllGather", "ag", 2, 80);
  t.events[0].correlation = t.events[1].correlation = 4;
  t.events[2].correlation = 5;
  t.events[2].stream_kind = StreamKind::kCommunication;
  Trace spans = instruction_spans(t);
  ASSERT_EQ(spans.events.size(), 2u);
  EXPECT_EQ(spans.events[0].kind, EventKind::kGemm);
  EXPECT_EQ(spans.name_of(spans.events[0]), "nvjet_gemm");
  EXPECT_EQ(spans.events[0].start_ns, 0);
  EXPECT_EQ(spans.events[0].end_ns, 100);
  EXPECT_EQ(compute_communication_overlap(spans).overlap_ns, 78);
}

TEST(Iterations, EventsWithoutCorrelationOrInstructionAreNotMerged) {
  Trace t;
  add_event(t, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 10);
  add_event(t, 0, 0, EventKind::kGemm, "gemm", "g0", 20, 30);
  add_event(t, 0, 0, EventKind::kOther, "k", "", 40, 50);
  add_event(t, 0, 0, EventKind::kOther, "k", "", 60, 70);
  for (Event& e : t.events) e.correlation = 0;
  t.events[2].correlation = t.events[3].correlation = 5;
  EXPECT_EQ(instruction_spans(t).events.size(), 4u);
}

TEST(Iterations, CompareMatchesMeasuredMedianIterationWithSimulatedRun) {
  Trace sim;
  add_event(sim, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 140);
  add_event(sim, 0, 1, EventKind::kElementwise, "add", "s", 150, 380);
  RunInfo measured_info, sim_info;
  measured_info.id = 1;
  measured_info.backend = "cuda";
  sim_info.id = 2;
  sim_info.backend = "sim";
  Comparison c = compare_runs(measured_info, measured(), sim_info, sim);
  EXPECT_EQ(c.a.iterations, 3);
  EXPECT_EQ(c.a.iteration, 2);
  EXPECT_EQ(c.a.makespan_ns, 400);
  EXPECT_EQ(c.b.iterations, 1);
  EXPECT_EQ(c.b.iteration, -1);
  EXPECT_EQ(c.matched, 2);
  EXPECT_EQ(c.only_in_a, 0);
  EXPECT_EQ(c.only_in_b, 0);
  for (const InstructionDelta& d : c.deltas) {
    if (d.instruction == "g0") {
      EXPECT_EQ(d.duration_a_ns, 150);
      EXPECT_EQ(d.duration_delta_ns(), -10);
    } else {
      EXPECT_EQ(d.instruction, "s");
      EXPECT_EQ(d.duration_a_ns, 200);
      EXPECT_EQ(d.start_delta_ns(), -50);
    }
  }
  EXPECT_NE(format_comparison_text(c).find("iteration 2, the median of 3"), std::string::npos);

  // Back to the events a timeline outlines: iteration 2's, the launch's first kernel.
  const std::vector<int64_t> in_a = delta_events(c, true, measured());
  const std::vector<int64_t> in_b = delta_events(c, false, sim);
  ASSERT_EQ(in_a.size(), c.deltas.size());
  for (size_t k = 0; k < c.deltas.size(); ++k) {
    const bool gemm = c.deltas[k].instruction == "g0";
    EXPECT_EQ(in_a[k], gemm ? 6 : 8);  // events 6, 7 (one launch) and 8 are iteration 2's
    EXPECT_EQ(in_b[k], gemm ? 0 : 1);
  }
}

// Eight steps of one kernel, 100..800 ns long in a shuffled order.
Trace eight_steps() {
  Trace t;
  const int64_t length[8] = {500, 100, 800, 300, 700, 200, 600, 400};
  for (int it = 0; it < 8; ++it) {
    add_event(t, 0, 0, EventKind::kOther, "k", "k", 1000 * it, 1000 * it + length[it]);
    t.events.back().iteration = it;
  }
  return t;
}

TEST(Iterations, LengthsAreSortedShortestFirst) {
  const std::vector<IterationLength> lengths = iteration_lengths(eight_steps());
  ASSERT_EQ(lengths.size(), 8u);
  EXPECT_EQ(lengths.front().iteration, 1);
  EXPECT_EQ(lengths.front().length_ns, 100);
  EXPECT_EQ(lengths.back().iteration, 2);
  EXPECT_EQ(median_iteration(eight_steps()), 7);  // 400 ns: the lower median of eight
  EXPECT_TRUE(iteration_lengths(Trace{}).empty());
}

// compare gives a measured run's middle half of steps (the 25th and 75th
// percentiles: 200 and 600 ns of 100..800), and says when the makespans
// differ by less than that spread.
TEST(Iterations, CompareGivesTheStepsSpreadAndSaysWhenADifferenceIsWithinIt) {
  RunInfo a_info, b_info;
  a_info.id = 1;
  b_info.id = 2;
  Trace close, far;
  add_event(close, 0, 0, EventKind::kOther, "k", "k", 0, 550);
  add_event(far, 0, 0, EventKind::kOther, "k", "k", 0, 900);
  const Comparison within = compare_runs(a_info, eight_steps(), b_info, close);
  EXPECT_EQ(within.a.middle_half_low_ns, 200);
  EXPECT_EQ(within.a.middle_half_high_ns, 600);
  EXPECT_EQ(within.b.middle_half_high_ns, 0);  // one iteration: no spread
  const std::string text = format_comparison_text(within);
  EXPECT_NE(text.find("the middle half of the steps 0.200-0.600 us"), std::string::npos) << text;
  EXPECT_NE(text.find("within A's own spread from step to step"), std::string::npos) << text;
  EXPECT_NE(comparison_json(within).find("\"middle_half_ns\":[200,600]"), std::string::npos);

  const std::string outside = format_comparison_text(compare_runs(a_info, eight_steps(), b_info, far));
  EXPECT_EQ(outside.find("own spread"), std::string::npos) << outside;  // 900 - 400 > 400
  // Three steps are too few for a spread.
  EXPECT_EQ(compare_runs(a_info, measured(), b_info, close).a.middle_half_high_ns, 0);
}

}  // namespace
}  // namespace sl::trace
