// The host-issue model (sim/engine.h, HostIssue): XLA's host thread issues
// launches in order at a cost each; a kernel starts at the latest of its
// issue and its stream's predecessor; the host blocks where XLA's WhileThunk
// does (a loop without a known trip count). Timelines by hand on the simple
// model: no launch gaps, a small GEMM of `ns` takes `ns` alone on 10% of the SMs.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sim/command_buffers.h"
#include "sim/engine.h"
#include "tests/sim/sim_test_util.h"

namespace sl::sim {
namespace {

using testing::mem_kernel;
using testing::simple_model;
using testing::small_gemm;

// `n` kernels of `ns` each on stream 0.
sched::DeviceProgram loop_of(int n, int64_t ns) {
  sched::DeviceProgram p;
  for (int i = 0; i < n; ++i) p.thunks.push_back(small_gemm(0, ns, "body"));
  return p;
}

HostIssue every_launch_costs(const sched::DeviceProgram& p, int64_t cost_ns) {
  HostIssue host;
  host.cost_ns = {std::vector<int64_t>(p.thunks.size(), cost_ns)};
  return host;
}

struct Outcome {
  int64_t end = -1;  // from time 0: the first launch counts
  int64_t host_bound = -1;
  int64_t host_wait_ns = -1;
  int64_t syncs = -1;
  std::vector<int64_t> starts;
};

Outcome simulate_with(const sched::DeviceProgram& p, const HostIssue* host) {
  SimOptions options;
  options.host_issue = host;
  auto trace = simulate({p}, simple_model(), options);
  EXPECT_TRUE(trace.is_ok()) << trace.status().message();
  Outcome out;
  if (!trace.is_ok()) return out;
  out.end = 0;
  for (const trace::Event& e : trace->events) {
    out.end = std::max(out.end, e.end_ns);
    out.starts.push_back(e.start_ns);
  }
  std::sort(out.starts.begin(), out.starts.end());
  auto counter = [&](const char* name) {
    for (const auto& c : trace->counters) {
      if (c.name == name) return c.value;
    }
    return int64_t{-1};
  };
  out.host_bound = counter(kHostBoundCounter);
  out.host_wait_ns = counter(kHostWaitNsCounter);
  out.syncs = counter(kHostSyncsCounter);
  return out;
}

TEST(HostIssue, ALoopOfKernelsShorterThanTheirLaunchIsLaunchBound) {
  // 10 kernels of 1 us, 5 us of host each: kernel k is issued at 5(k+1) us
  // and its predecessor ended long before, so the GPU runs at the host's pace.
  const sched::DeviceProgram p = loop_of(10, 1000);
  const HostIssue host = every_launch_costs(p, 5000);
  const Outcome r = simulate_with(p, &host);
  EXPECT_EQ(r.end, 10 * 5000 + 1000);
  EXPECT_EQ(r.starts[1] - r.starts[0], 5000);
  EXPECT_EQ(r.host_bound, 10);
  EXPECT_EQ(r.host_wait_ns, 5000 + 9 * 4000);  // the first from 0, the others after a 1 us kernel
  // Without the host model the same kernels run back to back.
  EXPECT_EQ(simulate_with(p, nullptr).end, 10 * 1000);
}

TEST(HostIssue, LongKernelsHideTheLaunches) {
  // 10 kernels of 20 us: after the first launch the host is always ahead.
  const sched::DeviceProgram p = loop_of(10, 20000);
  const HostIssue host = every_launch_costs(p, 5000);
  const Outcome r = simulate_with(p, &host);
  EXPECT_EQ(r.end, 5000 + 10 * 20000);
  EXPECT_EQ(r.host_bound, 1);
  EXPECT_EQ(r.syncs, 0);
}

TEST(HostIssue, ALaunchCostShowsOnlyWhereKernelsAreShorter) {
  // 20 us, 1 us, 1 us, 20 us at 5 us a launch: issues at 5, 10, 15, 20 us;
  // the long kernel ends at 25, the short ones run 25-26 and 26-27, the last
  // 27-47: the host caught up behind the first kernel.
  sched::DeviceProgram p;
  p.thunks = {small_gemm(0, 20000, "a"), small_gemm(0, 1000, "b"), small_gemm(0, 1000, "c"),
              small_gemm(0, 20000, "d")};
  const HostIssue host = every_launch_costs(p, 5000);
  EXPECT_EQ(simulate_with(p, &host).end, 47000);
  // At 12 us a launch the short kernels wait: issues at 12, 24, 36, 48 us;
  // a runs 12-32, b 32-33 (a's end), c 36-37 and d 48-68 (their issues).
  const HostIssue slow = every_launch_costs(p, 12000);
  const Outcome r = simulate_with(p, &slow);
  EXPECT_EQ(r.starts, (std::vector<int64_t>{12000, 32000, 36000, 48000}));
  EXPECT_EQ(r.end, 68000);
}

TEST(HostIssue, AWhileWithoutTripCountSyncsEveryTrip) {
  // Three trips of one 20 us kernel, 5 us a launch. With a known trip count
  // the host runs ahead: 5 + 3 * 20 us. Without, XLA copies the predicate to
  // the host and blocks before each later trip: 2 us after the kernel ends,
  // then the launch: 5 + 20, +2 +5 +20, +2 +5 +20 = 79 us.
  const sched::DeviceProgram p = loop_of(3, 20000);
  HostIssue host = every_launch_costs(p, 5000);
  EXPECT_EQ(simulate_with(p, &host).end, 65000);
  host.sync_before = {{0, 1, 1}};
  host.sync_ns = 2000;
  const Outcome r = simulate_with(p, &host);
  EXPECT_EQ(r.end, 79000);
  EXPECT_EQ(r.syncs, 2);
  EXPECT_EQ(r.host_bound, 3);
}

TEST(HostIssue, AStreamAfterASyncWaitsForTheHost) {
  // A 20 us kernel on the main stream, then one of 1 us on stream 1 after a
  // sync: stream 1 is idle, but its kernel is issued only once the main
  // stream is done (25 us), 2 us later, plus its launch: 32-33 us.
  sched::DeviceProgram p;
  p.thunks = {small_gemm(0, 20000, "a"), small_gemm(1, 1000, "b")};
  HostIssue host = every_launch_costs(p, 5000);
  const Outcome ahead = simulate_with(p, &host);
  EXPECT_EQ(ahead.starts, (std::vector<int64_t>{5000, 10000}));
  host.sync_before = {{0, 1}};
  host.sync_ns = 2000;
  const Outcome r = simulate_with(p, &host);
  EXPECT_EQ(r.starts, (std::vector<int64_t>{5000, 32000}));
  EXPECT_EQ(r.end, 33000);
}

// The last two thunks of `p` as one graph, the second after the first.
CommandBuffer last_two_as_graph(const sched::DeviceProgram& p, int64_t rerecorded_commands = 0) {
  const auto n = static_cast<uint32_t>(p.thunks.size());
  CommandBuffer g;
  g.thunks = {n - 2, n - 1};
  g.deps = {{}, {0}};
  g.rerecorded_commands = rerecorded_commands;
  return g;
}

TEST(HostIssue, CostsByHowXlaLaunches) {
  // A kernel and a cuBLAS call launched alone, then a graph of two nodes.
  sched::DeviceProgram p;
  p.thunks = {mem_kernel(0, 1000, "k"), small_gemm(0, 1000, "gemm"), mem_kernel(0, 1000, "n0"),
              mem_kernel(0, 1000, "n1")};
  auto laid = lay_out_command_buffers({p}, {{last_two_as_graph(p)}}, 1);
  ASSERT_TRUE(laid.is_ok()) << laid.status().message();
  DeviceModel m = simple_model();
  m.host_kernel_launch_us = 7;
  m.host_library_call_us = 20;
  m.host_graph_launch_us = 3;
  m.host_sync_us = 4;
  const HostIssue host = host_issue_of(*laid, {p}, m, {{3}}, {});
  ASSERT_EQ(host.cost_ns.size(), 1u);
  EXPECT_EQ(host.cost_ns[0], (std::vector<int64_t>{7000, 20000, 3000, 0}));  // the graph's launch once
  EXPECT_EQ(host.sync_before[0], (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(host.sync_ns, 4000);
}

TEST(HostIssue, ARecordedAgainGraphAndADynamicSliceCostTheirHostWork) {
  // A dynamic-slice fusion launched alone, then a graph of two nodes that XLA
  // records again (5 commands) before launching it.
  sched::DeviceProgram p;
  p.thunks = {mem_kernel(0, 1000, "slice"), mem_kernel(0, 1000, "n0"), mem_kernel(0, 1000, "n1")};
  auto laid = lay_out_command_buffers({p}, {{last_two_as_graph(p, 5)}}, 1);
  ASSERT_TRUE(laid.is_ok()) << laid.status().message();
  DeviceModel m = simple_model();
  m.host_kernel_launch_us = 7;
  m.host_dynamic_slice_us = 15;
  m.host_graph_launch_us = 3;
  m.host_graph_rerecord_us = 2;
  const HostIssue host = host_issue_of(*laid, {p}, m, {}, {{0}});
  ASSERT_EQ(host.cost_ns.size(), 1u);
  EXPECT_EQ(host.cost_ns[0], (std::vector<int64_t>{15000, 13000, 0}));
}

TEST(HostIssue, ACublasCallTracedAgainCostsItsOwnRecording) {
  // A graph of 5 commands, 2 of them cuBLAS calls XLA traces again:
  // 3 x 2 us + 2 x 6 us on top of the launch.
  sched::DeviceProgram p;
  p.thunks = {mem_kernel(0, 1000, "n0"), mem_kernel(0, 1000, "n1")};
  CommandBuffer g = last_two_as_graph(p, 5);
  g.retraced_commands = 2;
  auto laid = lay_out_command_buffers({p}, {{g}}, 1);
  ASSERT_TRUE(laid.is_ok()) << laid.status().message();
  DeviceModel m = simple_model();
  m.host_graph_launch_us = 3;
  m.host_graph_rerecord_us = 2;
  m.host_graph_retrace_us = 6;
  const HostIssue host = host_issue_of(*laid, {p}, m, {}, {});
  ASSERT_EQ(host.cost_ns.size(), 1u);
  EXPECT_EQ(host.cost_ns[0], (std::vector<int64_t>{3000 + 6000 + 12000, 0}));
}

TEST(HostIssue, AGraphsCublasCommandsCostTheHostAtEachLaunch) {
  // A graph launched as recorded with 2 cuBLAS commands: 2 x 2.5 us on top
  // of the launch.
  sched::DeviceProgram p;
  p.thunks = {mem_kernel(0, 1000, "n0"), mem_kernel(0, 1000, "n1")};
  CommandBuffer g = last_two_as_graph(p, 0);
  g.blas_commands = 2;
  auto laid = lay_out_command_buffers({p}, {{g}}, 1);
  ASSERT_TRUE(laid.is_ok()) << laid.status().message();
  DeviceModel m = simple_model();
  m.host_graph_launch_us = 3;
  m.host_graph_blas_command_us = 2.5;
  const HostIssue host = host_issue_of(*laid, {p}, m, {}, {});
  ASSERT_EQ(host.cost_ns.size(), 1u);
  EXPECT_EQ(host.cost_ns[0], (std::vector<int64_t>{3000 + 5000, 0}));
}

TEST(HostIssue, ACudnnCallKeepsTheHostUntilItsLastLaunch) {
  // A cuDNN call launched alone whose host code ran 12 us between its first
  // and last launch, then a kernel: the kernel's issue waits for it, and the
  // graph after pays only its launch.
  sched::DeviceProgram p;
  p.thunks = {mem_kernel(0, 1000, "conv"), mem_kernel(0, 1000, "k"), mem_kernel(0, 1000, "n0"),
              mem_kernel(0, 1000, "n1")};
  auto laid = lay_out_command_buffers({p}, {{last_two_as_graph(p)}}, 1);
  ASSERT_TRUE(laid.is_ok()) << laid.status().message();
  DeviceModel m = simple_model();
  m.host_kernel_launch_us = 7;
  m.host_graph_launch_us = 3;
  const HostIssue host = host_issue_of(*laid, {p}, m, {}, {}, {}, {{12000, 0, 0, 0}});
  ASSERT_EQ(host.cost_ns.size(), 1u);
  EXPECT_EQ(host.cost_ns[0], (std::vector<int64_t>{7000, 12000 + 7000, 3000, 0}));
}

TEST(HostIssue, TheH200ModelCarriesTheFittedHostCosts) {
  auto m = load_device_model("h200");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  // The median over ten calls of calibration programs launched kernel by kernel.
  EXPECT_DOUBLE_EQ(m->host_kernel_launch_us, 7.05);
  // The fastest and slowest of 28 calls, 5.0 and 9.4 us a kernel.
  EXPECT_DOUBLE_EQ(m->host_pace_fast_scale, 0.71);
  EXPECT_DOUBLE_EQ(m->host_pace_slow_scale, 1.33);
  // bench/fidelity/fit_host_issue.py on tests/corpus/captures/mlp_nocb.
  EXPECT_DOUBLE_EQ(m->host_library_call_us, 21.5);
  EXPECT_DOUBLE_EQ(m->stream_kernel_gap_us, 0.6);
  // Measured on the calibration programs (tests/corpus/jax/calibration_programs.py).
  EXPECT_DOUBLE_EQ(m->host_graph_launch_us, 10.5);
  EXPECT_DOUBLE_EQ(m->host_graph_rerecord_us, 1.13);
  // Fitted on the GEMM-choice what-ifs of five development loops (bench/FIDELITY-real.md).
  EXPECT_DOUBLE_EQ(m->host_graph_retrace_us, 11.0);
  EXPECT_DOUBLE_EQ(m->host_dynamic_slice_us, 16.9);
  // An assumption (docs/simulator.md, "Host issue").
  EXPECT_DOUBLE_EQ(m->host_sync_us, 5.0);
}

}  // namespace
}  // namespace sl::sim
