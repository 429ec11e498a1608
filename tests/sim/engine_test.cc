// Hand-computed timelines on the simple test device (sim_test_util.h).
#include "sim/engine.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/sim/sim_test_util.h"

namespace sl::sim {
namespace {

using hlo::Opcode;
using namespace sl::sim::testing;  // NOLINT(google-build-using-namespace)
using trace::EventKind;

trace::Trace run_ok(const std::vector<sched::DeviceProgram>& devices, const DeviceModel& model = simple_model()) {
  Result<trace::Trace> t = simulate(devices, model);
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return t.is_ok() ? std::move(t).value() : trace::Trace{};
}

void expect_span(const trace::Event& e, int64_t start, int64_t end) {
  EXPECT_EQ(e.start_ns, start);
  EXPECT_EQ(e.end_ns, end);
}

TEST(Engine, OneStreamRunsInOrder) {
  trace::Trace t = run_ok({device(0, {small_gemm(0, 100, "a"), mem_kernel(0, 50, "b"), small_gemm(0, 30, "c")})});
  ASSERT_EQ(t.events.size(), 3u);
  expect_span(only_event(t, "a"), 0, 100);
  expect_span(only_event(t, "b"), 100, 150);
  expect_span(only_event(t, "c"), 150, 180);
  EXPECT_EQ(t.makespan_ns(), 180);
  EXPECT_EQ(t.events[1].stream, 0);
  EXPECT_EQ(t.events[1].stream_kind, sched::StreamKind::kCompute);
  EXPECT_EQ(t.events[0].kind, EventKind::kGemm);
  EXPECT_EQ(t.name_of(t.events[0]), "gemm");
  EXPECT_EQ(t.events[1].bytes, 50);
  EXPECT_TRUE(t.dependencies.empty());
}

TEST(Engine, IndependentStreamsOverlap) {
  trace::Trace t = run_ok({device(0, {small_gemm(0, 100, "a"), small_gemm(1, 70, "b"), small_gemm(0, 20, "c")})});
  expect_span(only_event(t, "a"), 0, 100);
  expect_span(only_event(t, "b"), 0, 70);
  expect_span(only_event(t, "c"), 100, 120);
}

TEST(Engine, WaitDelaysUntilRecordAndAddsEdge) {
  // s1 waits for a's completion: b starts at 100, not 0; c on s0 is not held.
  trace::Trace t = run_ok({device(0,
                                  {small_gemm(0, 100, "a"), record(0, 0), wait(1, 0), small_gemm(1, 50, "b"),
                                   small_gemm(0, 30, "c")},
                                  1)});
  expect_span(only_event(t, "a"), 0, 100);
  expect_span(only_event(t, "b"), 100, 150);
  expect_span(only_event(t, "c"), 100, 130);
  ASSERT_EQ(t.dependencies.size(), 1u);
  EXPECT_EQ(t.instruction_of(t.events[t.dependencies[0].from]), "a");
  EXPECT_EQ(t.instruction_of(t.events[t.dependencies[0].to]), "b");
}

TEST(Engine, WaitForWorkAlreadyDoneDoesNotDelay) {
  // b waits for a (done at 10) while s1 is still busy with x until 40.
  trace::Trace t = run_ok({device(0,
                                  {small_gemm(0, 10, "a"), record(0, 0), small_gemm(1, 40, "x"), wait(1, 0),
                                   small_gemm(1, 10, "b")},
                                  1)});
  expect_span(only_event(t, "b"), 40, 50);
  EXPECT_EQ(t.dependencies.size(), 1u);
}

TEST(Engine, WaitOnEventRecordedLaterInProgramOrderIsNoOp) {
  trace::Trace t = run_ok({device(0, {wait(1, 0), small_gemm(1, 10, "b"), small_gemm(0, 100, "a"), record(0, 0)}, 1)});
  expect_span(only_event(t, "b"), 0, 10);
  ASSERT_EQ(t.counters.size(), 1u);
  EXPECT_EQ(t.counters[0].name, "sim.wait_without_record");
  EXPECT_EQ(t.counters[0].value, 1);
}

TEST(Engine, WaitSeesTheRecordIssuedBeforeIt) {
  // Event 0 is recorded twice; the second wait needs the second record (after c).
  trace::Trace t = run_ok({device(0,
                                  {small_gemm(0, 10, "a"), record(0, 0), wait(1, 0), small_gemm(1, 10, "b"),
                                   small_gemm(0, 100, "c"), record(0, 0), wait(1, 0), small_gemm(1, 10, "d")},
                                  1)});
  expect_span(only_event(t, "b"), 10, 20);
  expect_span(only_event(t, "d"), 110, 120);
}

TEST(Engine, RendezvousWaitsForLateDevice) {
  // all-reduce of 1000 bytes on 2 ranks: 2(n-1)/n * 1000 B at 1 B/ns = 1000 ns.
  auto ar = [](int64_t rank) { return collective(0, Opcode::kAllReduce, {0, 1}, rank, 1000, 1000, 7, "ar"); };
  trace::Trace t = run_ok({device(0, {small_gemm(0, 100, "k0"), ar(0), small_gemm(0, 10, "after")}),
                           device(1, {small_gemm(0, 300, "k1"), ar(1), small_gemm(0, 10, "after")})});
  expect_span(only_event(t, "ar", 0), 300, 1300);
  expect_span(only_event(t, "ar", 1), 300, 1300);
  expect_span(only_event(t, "after", 0), 1300, 1310);
  auto waits = find_events(t, "ar", /*waits=*/true);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0]->device, 0);
  EXPECT_EQ(waits[0]->kind, EventKind::kWait);
  expect_span(*waits[0], 100, 300);
  EXPECT_EQ(only_event(t, "ar", 0).kind, EventKind::kCollective);
  EXPECT_EQ(t.name_of(only_event(t, "ar", 0)), "all-reduce");
  // The late device's kernel held the early device's collective.
  ASSERT_EQ(t.dependencies.size(), 1u);
  EXPECT_EQ(t.instruction_of(t.events[t.dependencies[0].from]), "k1");
  EXPECT_EQ(t.events[t.dependencies[0].to].device, 0);
}

TEST(Engine, RingCostsOfCollectives) {
  // 4 ranks, 1 B/ns bus bandwidth, no latency.
  std::vector<int64_t> g = {0, 1, 2, 3};
  auto prog = [&](Opcode op, int64_t in, int64_t out) {
    std::vector<sched::DeviceProgram> devs;
    for (int64_t d = 0; d < 4; ++d) devs.push_back(device(d, {collective(100, op, g, d, in, out, 1, "c")}));
    return devs;
  };
  // all-gather of 4000 B out: 3/4 * 4000 = 3000 ns; reduce-scatter 4000 B in: 3000 ns;
  // all-reduce 4000 B: 2*3/4 * 4000 = 6000 ns.
  EXPECT_EQ(run_ok(prog(Opcode::kAllGather, 1000, 4000)).makespan_ns(), 3000);
  EXPECT_EQ(run_ok(prog(Opcode::kReduceScatter, 4000, 1000)).makespan_ns(), 3000);
  EXPECT_EQ(run_ok(prog(Opcode::kAllReduce, 4000, 4000)).makespan_ns(), 6000);
  trace::Trace t = run_ok(prog(Opcode::kAllGather, 1000, 4000));
  EXPECT_EQ(t.events[0].stream, 100);
  EXPECT_EQ(t.events[0].stream_kind, sched::StreamKind::kCommunication);
}

TEST(Engine, SeparateGroupsRendezvousSeparately) {
  // Groups {0,1} and {2,3} share a rendezvous id but not a rendezvous.
  auto ar = [](std::vector<int64_t> g, int64_t r) { return collective(0, Opcode::kAllReduce, g, r, 100, 100, 3, "ar"); };
  trace::Trace t = run_ok({device(0, {ar({0, 1}, 0)}), device(1, {ar({0, 1}, 1)}),
                           device(2, {small_gemm(0, 500, "late"), ar({2, 3}, 0)}), device(3, {ar({2, 3}, 1)})});
  expect_span(only_event(t, "ar", 0), 0, 100);
  expect_span(only_event(t, "ar", 3), 500, 600);
}

TEST(Engine, MovingAnInstructionToAnotherStreamShortensTheMakespan) {
  // Same work; b depends only on what was issued before it.
  std::vector<sched::Thunk> serial = {small_gemm(0, 100, "a"), small_gemm(0, 80, "b"), small_gemm(0, 50, "c")};
  EXPECT_EQ(run_ok({device(0, serial)}).makespan_ns(), 230);
  // b as an async op on stream 1: start waits for s0's work so far (none), done before c.
  std::vector<sched::Thunk> moved = {record(0, 0), wait(1, 0), small_gemm(1, 80, "b"), record(1, 1),
                                     small_gemm(0, 100, "a"), wait(0, 1), small_gemm(0, 50, "c")};
  trace::Trace t = run_ok({device(0, moved, 2)});
  expect_span(only_event(t, "b"), 0, 80);
  expect_span(only_event(t, "c"), 100, 150);
  EXPECT_EQ(t.makespan_ns(), 150);
}

TEST(Engine, ConcurrentMemoryKernelsShareHbm) {
  // Two streaming kernels of 100 B each: 2 B of demand per ns of 1 B/ns -> both at half speed.
  trace::Trace t = run_ok({device(0, {mem_kernel(0, 100, "x"), mem_kernel(1, 100, "y"), mem_kernel(1, 50, "z")})});
  expect_span(only_event(t, "x"), 0, 200);
  expect_span(only_event(t, "y"), 0, 200);
  expect_span(only_event(t, "z"), 200, 250);
}

TEST(Engine, RatesChangeWhenTheRunningSetChanges) {
  // x: 100 B, y: 40 B. Both at 1/2 until y ends at 80 (x has 60 B left), then x alone: ends 140.
  trace::Trace t = run_ok({device(0, {mem_kernel(0, 100, "x"), mem_kernel(1, 40, "y")})});
  expect_span(only_event(t, "y"), 0, 80);
  expect_span(only_event(t, "x"), 0, 140);
}

TEST(Engine, TwoSaturatingGemmsGainNothingOnTwoStreams) {
  DeviceModel m = simple_model();
  m.concurrent_kernel_efficiency = 0.8;
  trace::Trace one = run_ok({device(0, {big_gemm(0, 400, "g1"), big_gemm(0, 400, "g2")})}, m);
  EXPECT_EQ(one.makespan_ns(), 800);
  // Each needs the whole device: g1 came first and keeps it, at 0.8 while g2
  // waits for its SMs; g2 starts as g1 ends.
  trace::Trace two = run_ok({device(0, {big_gemm(0, 400, "g1"), big_gemm(1, 400, "g2")})}, m);
  expect_span(only_event(two, "g1"), 0, 500);
  expect_span(only_event(two, "g2"), 500, 900);
  // g2 waited for g1's SMs: an edge, so the critical path holds both.
  ASSERT_EQ(two.dependencies.size(), 1u);
  auto index_of = [&](const char* name) { return static_cast<uint32_t>(&only_event(two, name) - two.events.data()); };
  EXPECT_EQ(two.dependencies[0].from, index_of("g1"));
  EXPECT_EQ(two.dependencies[0].to, index_of("g2"));
  EXPECT_GE(two.makespan_ns(), one.makespan_ns());
}

TEST(Engine, CollectiveSlowsComputeAndComputeSlowsCollective) {
  DeviceModel m = simple_model();
  m.contention_factor = 2;         // 10 channels / 100 SMs * 2 -> kernels keep 0.8
  m.comm_rate_under_compute = 0.5;
  // all-gather of 1400 B out on 2 ranks: 700 ns alone. Launched before the
  // GEMM, it has its SMs when the GEMM starts.
  auto ag = [](int64_t r) { return collective(100, Opcode::kAllGather, {0, 1}, r, 700, 1400, 1, "ag"); };
  std::vector<sched::DeviceProgram> both = {device(0, {ag(0), big_gemm(0, 800, "g")}),
                                            device(1, {ag(1), big_gemm(0, 800, "g")})};
  trace::Trace t = run_ok(both, m);
  // GEMM at 0.8 for its whole life: 1000 ns. all-gather at 0.5 until 1000 (500 done), then 200 more.
  expect_span(only_event(t, "g", 0), 0, 1000);
  expect_span(only_event(t, "ag", 0), 0, 1200);
  expect_span(only_event(t, "ag", 1), 0, 1200);
  // Alone they take 800 and 700.
  EXPECT_EQ(run_ok({device(0, {big_gemm(0, 800, "g")})}, m).makespan_ns(), 800);
  EXPECT_EQ(run_ok({device(0, {ag(0)}), device(1, {ag(1)})}, m).makespan_ns(), 700);
}

// A GEMM marked beside_collective runs on all SMs but comm_sms, for its whole
// life: slower alone, but the collective takes the SMs it left free instead
// of the GEMM's, and runs at its own speed beside it.
TEST(Engine, GemmConfinedToFewerSmsLeavesThemToTheCollective) {
  DeviceModel m = simple_model();
  m.contention_factor = 2;  // would take 20 of the 100 SMs from kernels
  m.comm_rate_under_compute = 0.5;
  SimOptions options;
  options.comm_sms = 50;
  auto ag = [](int64_t r) { return collective(100, Opcode::kAllGather, {0, 1}, r, 700, 1400, 1, "ag"); };
  auto gemm = [] {
    sched::Thunk g = big_gemm(0, 400, "g");  // 100 tiles: 2 full waves on 50 SMs
    g.gemm.beside_collective = true;
    return g;
  };
  Result<trace::Trace> t = simulate({device(0, {gemm(), ag(0)}), device(1, {gemm(), ag(1)})}, m, options);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  expect_span(only_event(*t, "g", 0), 0, 800);    // half the SMs: twice the time
  expect_span(only_event(*t, "ag", 0), 0, 700);   // as alone: not comm_rate_under_compute
  // Sharing HBM and L2 with it may still slow it, at its kind's rate: at 0.5
  // until 800 (400 of 700 done), then alone. Another kind's does not apply.
  m.all_gather_rate_beside_confined_gemm = 0.5;
  m.reduce_scatter_rate_beside_confined_gemm = 0.25;
  Result<trace::Trace> shared = simulate({device(0, {gemm(), ag(0)}), device(1, {gemm(), ag(1)})}, m, options);
  ASSERT_TRUE(shared.is_ok()) << shared.status().message();
  expect_span(only_event(*shared, "ag", 0), 0, 1100);
  m.all_gather_rate_beside_confined_gemm = 1;
  // The same GEMM on every SM slows it: 1 - 0.5 * 1 = 0.5 while they overlap
  // (the GEMM, at 0.8 beside it, ends at 500), then alone.
  Result<trace::Trace> unconfined =
      simulate({device(0, {ag(0), big_gemm(0, 400, "g")}), device(1, {ag(1), big_gemm(0, 400, "g")})}, m);
  ASSERT_TRUE(unconfined.is_ok()) << unconfined.status().message();
  expect_span(only_event(*unconfined, "ag", 0), 0, 950);
  // Fewer busy SMs may run faster each: sm_limited_gemm_scale.
  m.sm_limited_gemm_scale = 1.25;
  Result<trace::Trace> faster = simulate({device(0, {gemm()})}, m, options);
  ASSERT_TRUE(faster.is_ok());
  expect_span(only_event(*faster, "g", 0), 0, 640);
  // Without comm_sms the mark changes nothing.
  Result<trace::Trace> unmarked = simulate({device(0, {gemm()})}, m);
  ASSERT_TRUE(unmarked.is_ok());
  expect_span(only_event(*unmarked, "g", 0), 0, 400);
}

// cuBLAS's GEMMs are persistent: one with a tile for every SM that reaches
// them before a collective's kernel holds them all until it ends, and the
// collective, though on its own stream, runs after it (on 2 H200s, a 128 MiB
// permute launched just after a 4096x8192x8192 GEMM: samples/permute_behind_gemm.hlo).
TEST(Engine, GemmOnEverySmLaunchedFirstHoldsALaterCollective) {
  auto ag = [](int64_t r) { return collective(100, Opcode::kAllGather, {0, 1}, r, 700, 1400, 1, "ag"); };
  trace::Trace t =
      run_ok({device(0, {big_gemm(1, 800, "g"), ag(0)}), device(1, {big_gemm(1, 800, "g"), ag(1)})});
  expect_span(only_event(t, "g", 0), 0, 800);
  expect_span(only_event(t, "ag", 0), 800, 1500);
  expect_span(only_event(t, "ag", 1), 800, 1500);
  // Its critical path runs through the GEMM that held the SMs.
  const trace::Event& ag0 = only_event(t, "ag", 0);
  EXPECT_TRUE(std::any_of(t.dependencies.begin(), t.dependencies.end(), [&](const trace::Dependency& d) {
    return &t.events[d.to] == &ag0 && t.instruction_of(t.events[d.from]) == "g" &&
           t.events[d.from].device == 0;
  }));

  // Counted, so a user sees why the overlap the schedule asked for did not happen.
  auto counter = [](const trace::Trace& tr, std::string_view name) -> int64_t {
    for (const trace::Counter& c : tr.counters) {
      if (c.name == name) return c.value;
    }
    return -1;
  };
  EXPECT_EQ(counter(t, kCollectivesHeldCounter), 1);
  EXPECT_EQ(counter(t, kHeldNsCounter), 800);
  // Its stream shows the wait for SMs.
  bool wait_shown = std::any_of(t.events.begin(), t.events.end(), [&](const trace::Event& e) {
    return e.kind == EventKind::kWait && e.device == 0 && t.name_of(e) == "wait for SMs held by a GEMM" &&
           e.start_ns == 0 && e.end_ns == 800;
  });
  EXPECT_TRUE(wait_shown);

  // Launched first but still in its launch gap when the collective arrives: it holds them too.
  DeviceModel m = simple_model();
  m.kernel_launch_us = 0.01;  // 10 ns
  trace::Trace launching =
      run_ok({device(0, {big_gemm(1, 800, "g"), ag(0)}), device(1, {big_gemm(1, 800, "g"), ag(1)})}, m);
  expect_span(only_event(launching, "g", 0), 10, 810);
  expect_span(only_event(launching, "ag", 0), 810, 1510);

  // Launched after the collective, a GEMM leaves its SMs to it (contention, as above).
  trace::Trace after =
      run_ok({device(0, {ag(0), big_gemm(1, 800, "g")}), device(1, {ag(1), big_gemm(1, 800, "g")})});
  expect_span(only_event(after, "ag", 0), 0, 700);
  EXPECT_EQ(counter(after, kCollectivesHeldCounter), -1);
}

TEST(Engine, OnlyAGemmOnEverySmHoldsACollective) {
  auto ag = [](int64_t r) { return collective(100, Opcode::kAllGather, {0, 1}, r, 700, 1400, 1, "ag"); };
  // A GEMM with fewer tiles than SMs leaves some free.
  trace::Trace small =
      run_ok({device(0, {small_gemm(1, 800, "g"), ag(0)}), device(1, {small_gemm(1, 800, "g"), ag(1)})});
  expect_span(only_event(small, "ag", 0), 0, 700);
  // One confined to fewer SMs beside the collective leaves them to it.
  SimOptions options;
  options.comm_sms = 50;
  auto confined = [] {
    sched::Thunk g = big_gemm(1, 400, "g");
    g.gemm.beside_collective = true;
    return g;
  };
  Result<trace::Trace> t =
      simulate({device(0, {confined(), ag(0)}), device(1, {confined(), ag(1)})}, simple_model(), options);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  expect_span(only_event(*t, "ag", 0), 0, 700);
  // A member whose collective kernel was resident before the GEMM started
  // keeps its SMs while it waits for a late member.
  trace::Trace early =
      run_ok({device(0, {ag(0), big_gemm(1, 800, "g")}), device(1, {mem_kernel(100, 300, "late"), ag(1)})});
  EXPECT_EQ(only_event(early, "ag", 0).start_ns, 300);
  EXPECT_EQ(only_event(early, "ag", 1).start_ns, 300);
}

TEST(Engine, SlowMemberHoldsTheCollectiveRate) {
  DeviceModel m = simple_model();
  m.comm_rate_under_compute = 0.5;
  // Only device 1 computes; the collective runs at its pace on both devices.
  auto ag = [](int64_t r) { return collective(100, Opcode::kAllGather, {0, 1}, r, 500, 1000, 1, "ag"); };
  trace::Trace t = run_ok({device(0, {ag(0)}), device(1, {ag(1), big_gemm(0, 2000, "g")})}, m);
  expect_span(only_event(t, "ag", 0), 0, 1000);
  expect_span(only_event(t, "ag", 1), 0, 1000);
}

TEST(Engine, LaunchOverheadAddsToEveryKernel) {
  DeviceModel m = simple_model();
  m.kernel_launch_us = 0.005;  // 5 ns
  trace::Trace t = run_ok({device(0, {small_gemm(0, 100, "a"), mem_kernel(0, 20, "b")})}, m);
  // Each launch is a gap before its kernel.
  expect_span(only_event(t, "a"), 5, 105);
  expect_span(only_event(t, "b"), 110, 130);
}

TEST(Engine, DeadlockOnMissingGroupMemberIsAnError) {
  auto ar = collective(0, Opcode::kAllReduce, {0, 1}, 0, 100, 100, 1, "ar");
  Result<trace::Trace> t = simulate({device(0, {ar}), device(1, {small_gemm(0, 10, "x")})}, simple_model());
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("deadlock"), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find("device 0 stream 0 thunk 0 (ar)"), std::string::npos) << t.status().message();
}

TEST(Engine, GroupNamingAnUnknownDeviceIsAnError) {
  auto ar = collective(0, Opcode::kAllReduce, {0, 5}, 0, 100, 100, 1, "ar");
  Result<trace::Trace> t = simulate({device(0, {ar})}, simple_model());
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("device 5"), std::string::npos) << t.status().message();
}

TEST(Engine, CollectivesInOppositeOrderDeadlock) {
  // Waits only refer to records issued before them, so they cannot form a
  // cycle; collectives issued in a different order on two devices can.
  auto c = [](int64_t r, int64_t id) { return collective(0, Opcode::kAllReduce, {0, 1}, r, 100, 100, id, "c"); };
  Result<trace::Trace> t = simulate({device(0, {c(0, 1), c(0, 2)}), device(1, {c(1, 2), c(1, 1)})}, simple_model());
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("deadlock"), std::string::npos) << t.status().message();
}

TEST(Engine, NegativeEventIdIsAnError) {
  Result<trace::Trace> t = simulate({device(0, {record(0, -1)})}, simple_model());
  ASSERT_FALSE(t.is_ok());
  EXPECT_EQ(t.status().code(), ErrorCode::kInvalidInput);
}

TEST(Engine, DeterministicAcrossRuns) {
  std::vector<sched::DeviceProgram> devs;
  for (int64_t d = 0; d < 4; ++d) {
    std::vector<sched::Thunk> th;
    for (int i = 0; i < 200; ++i) {
      int s = (i * 7 + static_cast<int>(d)) % 3;
      if (i % 5 == 0) th.push_back(mem_kernel(s, 30 + (i * 13 + d * 7) % 50, "m"));
      else th.push_back(big_gemm(s, 40 + (i * 17) % 90, "g"));
      if (i % 9 == 0) {
        th.push_back(record(s, i % 4));
        th.push_back(wait((s + 1) % 3, i % 4));
      }
      if (i % 20 == 0) th.push_back(collective(100, Opcode::kAllReduce, {0, 1, 2, 3}, d, 64 + i, 64 + i, i, "ar"));
    }
    devs.push_back(device(d, th, 4));
  }
  trace::Trace a = run_ok(devs);
  trace::Trace b = run_ok(devs);
  ASSERT_EQ(a.events.size(), b.events.size());
  ASSERT_GT(a.events.size(), 800u);
  for (size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].start_ns, b.events[i].start_ns) << i;
    EXPECT_EQ(a.events[i].end_ns, b.events[i].end_ns) << i;
    EXPECT_EQ(a.events[i].device, b.events[i].device) << i;
    EXPECT_EQ(a.events[i].stream, b.events[i].stream) << i;
  }
  ASSERT_EQ(a.dependencies.size(), b.dependencies.size());
  for (size_t i = 0; i < a.dependencies.size(); ++i) {
    EXPECT_EQ(a.dependencies[i].from, b.dependencies[i].from);
    EXPECT_EQ(a.dependencies[i].to, b.dependencies[i].to);
  }
  // Every event ends after it starts, and streams never run two events at once.
  for (const trace::Event& e : a.events) EXPECT_LE(e.start_ns, e.end_ns);
}

}  // namespace
}  // namespace sl::sim
