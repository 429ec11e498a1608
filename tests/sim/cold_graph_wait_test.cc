// The wait after a cold graph launch's first node (SimOptions::cold_graph_wait,
// DeviceModel::graph_cold_wait_*): a graph launched while the GPU waits for
// the host starts its other nodes no earlier than the wait after its first
// node started; one queued behind work, or a node whose gap was measured,
// waits not. Timelines by hand on the simple model: a small GEMM of `ns`
// takes `ns` alone, no launch gaps.

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/command_buffers.h"
#include "sim/engine.h"
#include "tests/sim/sim_test_util.h"

namespace sl::sim {
namespace {

using testing::simple_model;
using testing::small_gemm;

// `before` us of work launched alone (none when 0), then a graph: a chain of
// eight 1 us kernels.
sched::DeviceProgram program(int64_t before_ns) {
  sched::DeviceProgram p;
  if (before_ns > 0) p.thunks.push_back(small_gemm(0, before_ns, "before"));
  for (int i = 0; i < 8; ++i) p.thunks.push_back(small_gemm(0, 1000, "node"));
  return p;
}

CommandBuffer chain(uint32_t first) {
  CommandBuffer g;
  for (uint32_t i = 0; i < 8; ++i) {
    g.thunks.push_back(first + i);
    g.deps.push_back(i == 0 ? std::vector<int>{} : std::vector<int>{static_cast<int>(i) - 1});
  }
  return g;
}

// 1 us a node past the first 3, at most 10: 5 us for eight nodes. The host
// takes 10 us to launch the graph, 1 us a kernel launched alone.
DeviceModel waiting_model() {
  DeviceModel m = simple_model();
  m.graph_launch_us = 0;
  m.graph_node_gap_us = 0;
  m.stream_kernel_gap_us = 0;
  m.host_kernel_launch_us = 1;
  m.host_graph_launch_us = 10;
  m.graph_cold_wait_per_node_us = 1;
  m.graph_cold_wait_free_nodes = 3;
  m.graph_cold_wait_max_us = 10;
  return m;
}

struct GraphRun {
  std::vector<int64_t> starts;  // the graph's nodes, in time order
  int64_t end = 0;
  int64_t waited_ns = -1;
};

GraphRun run(int64_t before_ns, const std::vector<std::vector<uint8_t>>* modelled_gap = nullptr) {
  const DeviceModel m = waiting_model();
  const std::vector<sched::DeviceProgram> original = {program(before_ns)};
  auto laid = lay_out_command_buffers(original, {{chain(before_ns > 0 ? 1 : 0)}}, 1);
  EXPECT_TRUE(laid.is_ok()) << laid.status().message();
  GraphRun out;
  if (!laid.is_ok()) return out;
  const auto gaps = role_gaps_ns(*laid, m, true);
  const HostIssue host = host_issue_of(*laid, original, m, {}, {});
  const ColdGraphWait wait = cold_graph_wait(*laid, m, modelled_gap);
  SimOptions options;
  options.fixed_thunk_gap_ns = &gaps;
  options.host_issue = &host;
  options.cold_graph_wait = &wait;
  auto trace = simulate(laid->devices, m, options);
  EXPECT_TRUE(trace.is_ok()) << trace.status().message();
  if (!trace.is_ok()) return out;
  for (const trace::Event& e : trace->events) {
    out.end = std::max(out.end, e.end_ns);
    if (trace->instruction_of(e) == "node") out.starts.push_back(e.start_ns);
  }
  std::sort(out.starts.begin(), out.starts.end());
  for (const trace::Counter& c : trace->counters) {
    if (c.name == kColdGraphWaitNsCounter) out.waited_ns = c.value;
  }
  return out;
}

TEST(ColdGraphWait, TheWaitGrowsWithTheNodesUpToItsMost) {
  const DeviceModel m = waiting_model();
  auto laid = lay_out_command_buffers({program(0)}, {{chain(0)}}, 1);
  ASSERT_TRUE(laid.is_ok()) << laid.status().message();
  EXPECT_EQ(cold_graph_wait(*laid, m).wait_ns, (std::vector<int64_t>{5000}));
  DeviceModel capped = m;
  capped.graph_cold_wait_max_us = 2;
  EXPECT_EQ(cold_graph_wait(*laid, capped).wait_ns, (std::vector<int64_t>{2000}));
  DeviceModel none = m;
  none.graph_cold_wait_per_node_us = 0;
  EXPECT_TRUE(cold_graph_wait(*laid, none).wait_ns.empty());
}

// Launched first, the graph waits for the host's 10 us: its second node
// starts 5 us after its first (not 1 us), the others back to back after.
TEST(ColdGraphWait, AColdLaunchHoldsTheNodesAfterTheFirst) {
  const GraphRun r = run(0);
  ASSERT_EQ(r.starts.size(), 8u);
  EXPECT_EQ(r.starts[0], 10000);
  EXPECT_EQ(r.starts[1] - r.starts[0], 5000);
  EXPECT_EQ(r.starts[2] - r.starts[1], 1000);
  EXPECT_EQ(r.end, 10000 + 5000 + 7000);
  EXPECT_EQ(r.waited_ns, 4000);
}

// Behind 50 us of work the host launched the graph long before the GPU got
// to it: a warm launch, no wait.
TEST(ColdGraphWait, ALaunchQueuedBehindWorkWaitsNot) {
  const GraphRun r = run(50000);
  ASSERT_EQ(r.starts.size(), 8u);
  EXPECT_EQ(r.starts[0], 50000);
  EXPECT_EQ(r.starts[1] - r.starts[0], 1000);
  EXPECT_EQ(r.waited_ns, 0);
}

// A node whose gap was measured (a replay of a capture with the graph)
// already shows its wait: not held again.
TEST(ColdGraphWait, MeasuredGapsAreNotHeldAgain) {
  const std::vector<std::vector<uint8_t>> measured = {std::vector<uint8_t>(8, 0)};
  const GraphRun r = run(0, &measured);
  ASSERT_EQ(r.starts.size(), 8u);
  EXPECT_EQ(r.starts[1] - r.starts[0], 1000);
  EXPECT_EQ(r.waited_ns, 0);
}

TEST(ColdGraphWait, TheH200ModelCarriesTheFittedWait) {
  auto m = load_device_model("h200");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_DOUBLE_EQ(m->graph_cold_wait_per_node_us, 0.3);
  EXPECT_EQ(m->graph_cold_wait_free_nodes, 3);
  EXPECT_DOUBLE_EQ(m->graph_cold_wait_max_us, 4.5);
}

}  // namespace
}  // namespace sl::sim
