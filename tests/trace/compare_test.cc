// compare on two hand-made traces with hand-computed deltas.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/trace/compare.h"
#include "tests/trace/trace_test_util.h"

namespace sl::trace {
namespace {

using testing::add_event;
using testing::kComm;

struct Pair {
  RunInfo info_a, info_b;
  Trace a, b;
};

Pair make_pair() {
  Pair p;
  p.info_a.id = 1;
  p.info_a.backend = "sim";
  p.info_b.id = 2;
  p.info_b.backend = "sim";
  add_event(p.a, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 100);
  add_event(p.a, 0, 0, EventKind::kGemm, "gemm", "g1", 100, 200);
  add_event(p.a, 0, kComm, EventKind::kCollective, "all-gather", "ag", 0, 150);
  add_event(p.a, 0, 0, EventKind::kGemm, "gemm", "g0", 200, 250);  // second occurrence (iteration 2)
  add_event(p.a, 1, 0, EventKind::kGemm, "gemm", "g0", 0, 100);     // device 1: only in A

  add_event(p.b, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 120);
  add_event(p.b, 0, 1, EventKind::kGemm, "gemm", "g1", 0, 90);      // moved to stream 1
  add_event(p.b, 0, kComm, EventKind::kCollective, "all-gather", "ag", 10, 150);
  add_event(p.b, 0, 0, EventKind::kGemm, "gemm", "g0", 150, 170);
  add_event(p.b, 0, 0, EventKind::kElementwise, "add", "extra", 120, 130);  // only in B
  return p;
}

TEST(CompareTest, MatchesPerDeviceInstructionOccurrenceWithHandComputedDeltas) {
  Pair p = make_pair();
  Comparison c = compare_runs(p.info_a, p.a, p.info_b, p.b);
  EXPECT_EQ(c.a.makespan_ns, 250);
  EXPECT_EQ(c.b.makespan_ns, 170);
  EXPECT_EQ(c.makespan_delta_ns(), -80);
  EXPECT_EQ(c.matched, 4);
  EXPECT_EQ(c.only_in_a, 1);
  EXPECT_EQ(c.only_in_b, 1);
  ASSERT_EQ(c.deltas.size(), 6u);

  // Sorted by |duration delta|, then |start delta|.
  EXPECT_EQ(c.deltas[0].instruction, "g0");
  EXPECT_EQ(c.deltas[0].occurrence, 1);
  EXPECT_EQ(c.deltas[0].duration_delta_ns(), -30);  // 20 - 50
  EXPECT_EQ(c.deltas[0].start_delta_ns(), -50);     // 150 - 200
  EXPECT_EQ(c.deltas[1].instruction, "g0");
  EXPECT_EQ(c.deltas[1].occurrence, 0);
  EXPECT_EQ(c.deltas[1].duration_delta_ns(), 20);
  EXPECT_EQ(c.deltas[1].start_delta_ns(), 0);
  EXPECT_EQ(c.deltas[2].instruction, "g1");
  EXPECT_EQ(c.deltas[2].duration_delta_ns(), -10);
  EXPECT_EQ(c.deltas[2].start_delta_ns(), -100);
  EXPECT_EQ(c.deltas[2].stream_a, 0);
  EXPECT_EQ(c.deltas[2].stream_b, 1);
  EXPECT_EQ(c.deltas[3].instruction, "ag");
  EXPECT_EQ(c.deltas[3].duration_delta_ns(), -10);
  EXPECT_EQ(c.deltas[3].start_delta_ns(), 10);
  EXPECT_TRUE(c.deltas[4].in_a && !c.deltas[4].in_b);
  EXPECT_EQ(c.deltas[4].device, 1);
  EXPECT_TRUE(!c.deltas[5].in_a && c.deltas[5].in_b);
  EXPECT_EQ(c.deltas[5].instruction, "extra");

  // Stream busy time and overlap of each run.
  ASSERT_EQ(c.b.streams.size(), 3u);
  EXPECT_EQ(c.b.streams[0].busy_ns, 120 + 10 + 20);
  EXPECT_EQ(c.b.streams[1].busy_ns, 90);
  // B device 0: compute [0,130) [150,170); comm [10,150) -> overlap [10,130) = 120 of 140.
  EXPECT_EQ(c.b.overlap.overlap_ns, 120);
  EXPECT_EQ(c.b.overlap.communication_ns, 140);
  EXPECT_FALSE(c.a.critical_path.events.empty());
  EXPECT_EQ(c.a.critical_path_names.back(), "g0 (gemm)");
}

TEST(CompareTest, JsonHoldsBothMakespansAndDeltas) {
  Pair p = make_pair();
  Comparison c = compare_runs(p.info_a, p.a, p.info_b, p.b);
  auto j = nlohmann::json::parse(comparison_json(c));
  EXPECT_EQ(j["a"]["makespan_ns"], 250);
  EXPECT_EQ(j["b"]["makespan_ns"], 170);
  EXPECT_EQ(j["makespan_a_ns"], 250);
  EXPECT_EQ(j["makespan_b_ns"], 170);
  EXPECT_EQ(j["a"]["run"], 1);
  EXPECT_EQ(j["only_in_a"], 1);
  ASSERT_EQ(j["deltas"].size(), 6u);
  EXPECT_EQ(j["deltas"][0]["instruction"], "g0");
  EXPECT_EQ(j["deltas"][0]["duration_delta_ns"], -30);
  EXPECT_EQ(j["deltas"][0]["start_delta_ns"], -50);
  EXPECT_FALSE(j["deltas"][4].contains("duration_delta_ns"));
  EXPECT_EQ(j["deltas"][5]["in_a"], false);
  EXPECT_TRUE(j["a"]["overlap"].contains("ratio"));
  EXPECT_TRUE(j["b"]["critical_path"]["events"].is_array());

  std::string text = format_comparison_text(c);
  EXPECT_NE(text.find("makespan delta (B - A): -0.080 us"), std::string::npos) << text;
  EXPECT_NE(text.find("only A"), std::string::npos);
  EXPECT_NE(text.find("only B"), std::string::npos);
}

// A loop's critical path runs through every trip: the text keeps its ends
// within the row limit and says how many it left out; the JSON keeps all.
TEST(CompareTest, ALongCriticalPathKeepsItsEndsInTheText) {
  RunInfo info;
  info.id = 1;
  Trace chain;
  for (int i = 0; i < 100; ++i) {
    add_event(chain, 0, 0, EventKind::kGemm, "gemm", "k" + std::to_string(i), i * 10, i * 10 + 10);
  }
  const Comparison c = compare_runs(info, chain, info, chain);
  const std::string text = format_comparison_text(c, 8);
  EXPECT_NE(text.find("\n  k0 (gemm) -> k1 (gemm) -> k2 (gemm) -> k3 (gemm) -> ... 92 more -> k96 (gemm) -> "
                      "k97 (gemm) -> k98 (gemm) -> k99 (gemm)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(format_comparison_text(c).find("k49 (gemm) -> k50 (gemm)"), std::string::npos) << "no limit: all of it";
  EXPECT_EQ(nlohmann::json::parse(comparison_json(c))["a"]["critical_path"]["events"].size(), 100u);
}

TEST(CompareTest, IdenticalRunsHaveZeroDeltas) {
  Pair p = make_pair();
  Comparison c = compare_runs(p.info_a, p.a, p.info_a, p.a);
  EXPECT_EQ(c.only_in_a + c.only_in_b, 0);
  for (const auto& d : c.deltas) {
    EXPECT_EQ(d.duration_delta_ns(), 0);
    EXPECT_EQ(d.start_delta_ns(), 0);
  }
}

// Measured traces start some µs after their run's origin, and not at the same
// offset in both runs: start deltas must be taken from each run's own origin.
TEST(CompareTest, StartDeltasSubtractEachRunsOrigin) {
  RunInfo info_a, info_b;
  info_a.id = 1;
  info_a.backend = "cuda";
  info_b.id = 2;
  info_b.backend = "sim";
  Trace a, b;
  add_event(a, 0, 0, EventKind::kGemm, "gemm", "g0", 5000, 5100);
  add_event(a, 0, 0, EventKind::kGemm, "gemm", "g1", 5100, 5300);
  add_event(b, 0, 0, EventKind::kGemm, "gemm", "g0", 3000, 3120);
  add_event(b, 0, 0, EventKind::kGemm, "gemm", "g1", 3120, 3300);
  Comparison c = compare_runs(info_a, a, info_b, b);
  ASSERT_EQ(c.deltas.size(), 2u);
  for (const InstructionDelta& d : c.deltas) {
    ASSERT_TRUE(d.in_a && d.in_b) << d.instruction;
    if (d.instruction == "g0") {
      EXPECT_EQ(d.start_a_ns, 0);
      EXPECT_EQ(d.start_b_ns, 0);
      EXPECT_EQ(d.start_delta_ns(), 0);
    } else {
      EXPECT_EQ(d.instruction, "g1");
      EXPECT_EQ(d.start_a_ns, 100);
      EXPECT_EQ(d.start_b_ns, 120);
      EXPECT_EQ(d.start_delta_ns(), 20);
    }
  }
}

// The same two kernels, 5 us apart in A and 50 us apart in B: the GPU idle
// time, not the kernels, is what moved (a host-bound step in a slower process).
TEST(CompareTest, AStepSlowedByItsIdleTimeIsSaidToBeTheHosts) {
  RunInfo info_a, info_b;
  info_a.id = 1;
  info_b.id = 2;
  Trace a, b;
  add_event(a, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 100);
  add_event(a, 0, 0, EventKind::kGemm, "gemm", "g1", 105, 205);
  add_event(b, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 101);
  add_event(b, 0, 0, EventKind::kGemm, "gemm", "g1", 151, 250);
  Comparison c = compare_runs(info_a, a, info_b, b);
  ASSERT_EQ(c.a.idle.size(), 1u);
  EXPECT_EQ(c.a.idle[0].span_ns, 205);
  EXPECT_EQ(c.a.idle[0].busy_ns, 200);
  EXPECT_EQ(c.a.idle[0].idle_ns(), 5);
  EXPECT_EQ(c.b.idle[0].idle_ns(), 50);
  const std::string text = format_comparison_text(c);
  EXPECT_NE(text.find("GPU idle"), std::string::npos) << text;
  EXPECT_NE(text.find("the host's pace"), std::string::npos) << text;
  auto j = nlohmann::json::parse(comparison_json(c));
  EXPECT_EQ(j["b"]["idle"][0]["idle_ns"], 50);

  // Slower kernels, the same gap: no word about the host.
  Trace slower;
  add_event(slower, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 150);
  add_event(slower, 0, 0, EventKind::kGemm, "gemm", "g1", 155, 305);
  const std::string kernels = format_comparison_text(compare_runs(info_a, a, info_b, slower));
  EXPECT_EQ(kernels.find("the host's pace"), std::string::npos) << kernels;
}

TEST(CompareTest, TwoCapturesWhoseHostsRanAtDifferentPacesAreSaidSo) {
  RunInfo info_a, info_b;
  info_a.id = 1;
  info_b.id = 2;
  Trace a, b;
  add_event(a, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 100);
  add_event(b, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 100);
  // Neither run measured its host (simulated runs): no host section.
  EXPECT_EQ(format_comparison_text(compare_runs(info_a, a, info_b, b)).find("host probe"), std::string::npos);

  a.add_counter(kHostProbeStartCounter, 1'100'000, kHostProbeDescription);
  a.add_counter(kHostProbeEndCounter, 1'050'000, kHostProbeDescription);
  b.add_counter(kHostProbeStartCounter, 1'150'000, kHostProbeDescription);
  b.add_counter(kHostProbeEndCounter, 1'000'000, kHostProbeDescription);
  const Comparison alike = compare_runs(info_a, a, info_b, b);
  EXPECT_EQ(alike.b.host.start_ns, 1'150'000);
  const std::string alike_text = format_comparison_text(alike);
  EXPECT_NE(alike_text.find("host probe"), std::string::npos) << alike_text;
  EXPECT_EQ(alike_text.find("different paces"), std::string::npos) << alike_text;
  auto j = nlohmann::json::parse(comparison_json(alike));
  EXPECT_EQ(j["a"]["host_probe_ns"]["end"], 1'050'000);

  // B's core at half speed by the end of its capture.
  Trace slow_host = b;
  slow_host.counters.clear();
  slow_host.add_counter(kHostProbeStartCounter, 1'150'000, kHostProbeDescription);
  slow_host.add_counter(kHostProbeEndCounter, 2'200'000, kHostProbeDescription);
  const std::string apart = format_comparison_text(compare_runs(info_a, a, info_b, slow_host));
  EXPECT_NE(apart.find("different paces"), std::string::npos) << apart;
  EXPECT_NE(apart.find("x2.10 at the end"), std::string::npos) << apart;
}

}  // namespace
}  // namespace sl::trace
