#include "sim/command_buffers.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/engine.h"
#include "tests/sim/sim_test_util.h"

namespace sl::sim {
namespace {

using testing::small_gemm;

// A diamond: a, then b and c (independent, each on a tenth of the SMs), then d.
// The HLO put c on stream 1; in the graph it is a node like the others.
sched::DeviceProgram diamond() {
  sched::DeviceProgram p;
  p.thunks = {small_gemm(0, 1000, "a"), small_gemm(0, 1000, "b"), small_gemm(1, 1000, "c"), small_gemm(0, 1000, "d")};
  return p;
}

CommandBuffer diamond_graph() {
  CommandBuffer g;
  g.thunks = {0, 1, 2, 3};
  g.deps = {{}, {0}, {0}, {1, 2}};
  return g;
}

DeviceModel graph_model(int concurrency, double launch_us, double node_gap_us) {
  DeviceModel m = testing::simple_model();
  m.graph_concurrency = concurrency;
  m.graph_launch_us = launch_us;
  m.graph_node_gap_us = node_gap_us;
  m.stream_kernel_gap_us = 5;
  return m;
}

int64_t makespan(const GraphProgram& laid, const DeviceModel& m, bool stream_launch = true) {
  const auto gaps = role_gaps_ns(laid, m, stream_launch);
  SimOptions options;
  options.fixed_thunk_gap_ns = &gaps;
  auto trace = simulate(laid.devices, m, options);
  EXPECT_TRUE(trace.is_ok()) << trace.status().message();
  if (!trace.is_ok()) return -1;
  // From time 0: the launch before the first kernel counts.
  int64_t end = 0;
  for (const trace::Event& e : trace->events) end = std::max(end, e.end_ns);
  return end;
}

TEST(CommandBuffers, IndependentNodesOverlapAlongTheDag) {
  const std::vector<sched::DeviceProgram> programs = {diamond()};
  const DeviceModel two = graph_model(2, 0, 0);
  auto laid = lay_out_command_buffers(programs, {{diamond_graph()}}, two.graph_concurrency);
  ASSERT_TRUE(laid.is_ok()) << laid.status().message();
  EXPECT_EQ(laid->graphs, 1);
  EXPECT_EQ(laid->nodes, 4);
  // a, then b beside c, then d: three kernels' time.
  EXPECT_EQ(makespan(*laid, two), 3000);

  const DeviceModel one = graph_model(1, 0, 0);
  auto serial = lay_out_command_buffers(programs, {{diamond_graph()}}, one.graph_concurrency);
  ASSERT_TRUE(serial.is_ok());
  EXPECT_EQ(makespan(*serial, one), 4000);
}

TEST(CommandBuffers, ANodeWaitsForEveryPredecessor) {
  // d after b and c; c much longer than b: d starts when c ends.
  sched::DeviceProgram p = diamond();
  p.thunks[2] = small_gemm(1, 5000, "c");
  const DeviceModel m = graph_model(4, 0, 0);
  auto laid = lay_out_command_buffers({p}, {{diamond_graph()}}, m.graph_concurrency);
  ASSERT_TRUE(laid.is_ok());
  EXPECT_EQ(makespan(*laid, m), 7000);
}

TEST(CommandBuffers, TheGraphLaunchIsPaidOnceAndNodesPayTheirGap) {
  const DeviceModel m = graph_model(1, 3, 0.5);  // 3 us launch, 0.5 us between nodes
  auto laid = lay_out_command_buffers({diamond()}, {{diamond_graph()}}, m.graph_concurrency);
  ASSERT_TRUE(laid.is_ok());
  EXPECT_EQ(makespan(*laid, m), 3000 + 4000 + 3 * 500);
  // Off: the kernels launched one by one at stream_kernel_gap_us each, on the
  // HLO's streams (c on stream 1 beside b).
  auto off = lay_out_command_buffers({diamond()}, {}, m.graph_concurrency);
  ASSERT_TRUE(off.is_ok());
  EXPECT_EQ(off->graphs, 0);
  EXPECT_EQ(makespan(*off, m), 3 * (5000 + 1000));
}

// Three nodes with no predecessor (a loop body's async copy, its first
// fusion, an update of another buffer), one after another on one lane: the
// launch latency is the graph's, once, not each source node's.
TEST(CommandBuffers, SourceNodesOnOneLaneShareOneLaunch) {
  sched::DeviceProgram p;
  p.thunks = {small_gemm(0, 1000, "copy"), small_gemm(0, 1000, "concat"), small_gemm(0, 1000, "update")};
  CommandBuffer g;
  g.thunks = {0, 1, 2};
  g.deps = {{}, {}, {}};
  const DeviceModel m = graph_model(1, 3, 0.5);
  auto laid = lay_out_command_buffers({p}, {{g}}, m.graph_concurrency);
  ASSERT_TRUE(laid.is_ok());
  EXPECT_EQ(makespan(*laid, m), 3000 + 3000 + 2 * 500);
  // On two lanes the second lane's first node waits for the launch too.
  const DeviceModel two = graph_model(2, 3, 0.5);
  auto wide = lay_out_command_buffers({p}, {{g}}, two.graph_concurrency);
  ASSERT_TRUE(wide.is_ok());
  EXPECT_EQ(makespan(*wide, two), 3000 + 1000 + 500 + 1000);
}

TEST(CommandBuffers, ANegativeNodeGapOverlapsThePredecessorsTail) {
  const DeviceModel m = graph_model(1, 0, -0.1);
  auto laid = lay_out_command_buffers({diamond()}, {{diamond_graph()}}, m.graph_concurrency);
  ASSERT_TRUE(laid.is_ok());
  EXPECT_EQ(makespan(*laid, m), 4000 - 3 * 100);
}

// XLA launches its Triton GEMM fusions with programmatic dependent launch
// (xla.pdl_launch="true"): the node after one overlaps its tail by
// graph_node_gap_after_pdl_launch_us; the other nodes keep graph_node_gap_us.
TEST(CommandBuffers, TheNodeAfterAPdlLaunchOverlapsItsTail) {
  static const hlo::Instruction pdl_gemm = [] {
    hlo::Instruction i;
    i.name = "gemm_fusion_dot";
    i.opcode = hlo::Opcode::kFusion;
    i.frontend_attributes["xla.pdl_launch"] = "true";
    return i;
  }();
  sched::DeviceProgram p = diamond();
  p.thunks[0].instruction = &pdl_gemm;
  DeviceModel m = graph_model(1, 0, 0.5);
  m.graph_node_gap_after_pdl_launch_us = -0.2;
  auto laid = lay_out_command_buffers({p}, {{diamond_graph()}}, m.graph_concurrency);
  ASSERT_TRUE(laid.is_ok());
  EXPECT_EQ(after_pdl_launch(*laid)[0], (std::vector<uint8_t>{0, 1, 0, 0}));
  // a, then b 0.2 us into a's tail, then c and d 0.5 us after their predecessors.
  EXPECT_EQ(makespan(*laid, m), 4000 - 200 + 2 * 500);
  // Without the attribute every node pays the same gap.
  auto plain = lay_out_command_buffers({diamond()}, {{diamond_graph()}}, m.graph_concurrency);
  ASSERT_TRUE(plain.is_ok());
  EXPECT_EQ(after_pdl_launch(*plain)[0], (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(makespan(*plain, m), 4000 + 3 * 500);
  // Launched alone (no graph), a kernel after it waits as any does.
  auto off = lay_out_command_buffers({p}, {}, m.graph_concurrency);
  ASSERT_TRUE(off.is_ok());
  EXPECT_EQ(after_pdl_launch(*off)[0], (std::vector<uint8_t>{0, 0, 0, 0}));
}

// A kernel node after a memcpy node of a graph XLA records again before each
// launch (a scan's body) pays graph_node_gap_after_copy_us: the copy engine's
// hand-over. Not in a graph launched as recorded, nor after a kernel, nor a
// copy node itself.
TEST(CommandBuffers, AKernelAfterACopyInAGraphRecordedAgainPaysTheHandOver) {
  DeviceModel m = graph_model(1, 0, 0.5);
  m.graph_node_gap_after_copy_us = 1.5;
  CommandBuffer chain;  // a (copy) -> b -> c (copy) -> d
  chain.thunks = {0, 1, 2, 3};
  chain.deps = {{}, {0}, {1}, {2}};
  chain.copies = {1, 0, 1, 0};
  chain.rerecorded_commands = 4;
  auto laid = lay_out_command_buffers({diamond()}, {{chain}}, m.graph_concurrency);
  ASSERT_TRUE(laid.is_ok()) << laid.status().message();
  EXPECT_EQ(laid->after_copy[0], (std::vector<uint8_t>{0, 1, 0, 1}));
  // a, then b and d 1.5 us after their copies, c 0.5 us after b.
  EXPECT_EQ(makespan(*laid, m), 4000 + 2 * 1500 + 500);
  // The same graph launched as recorded: every node pays the node gap.
  chain.rerecorded_commands = 0;
  auto as_recorded = lay_out_command_buffers({diamond()}, {{chain}}, m.graph_concurrency);
  ASSERT_TRUE(as_recorded.is_ok());
  EXPECT_EQ(as_recorded->after_copy[0], (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(makespan(*as_recorded, m), 4000 + 3 * 500);
}

TEST(CommandBuffers, TracesShowTheLaunchingStreamAndTheOriginalThunks) {
  const std::vector<sched::DeviceProgram> programs = {diamond()};
  const DeviceModel m = graph_model(2, 0, 0);
  auto laid = lay_out_command_buffers(programs, {{diamond_graph()}}, m.graph_concurrency);
  ASSERT_TRUE(laid.is_ok());
  const auto gaps = role_gaps_ns(*laid, m, true);
  SimOptions options;
  options.fixed_thunk_gap_ns = &gaps;
  auto trace = simulate(laid->devices, m, options);
  ASSERT_TRUE(trace.is_ok());
  map_back(*laid, programs, *trace);
  std::vector<int64_t> seen;
  for (const trace::Event& e : trace->events) {
    EXPECT_EQ(e.stream, sched::kMainStream);  // c too: a graph node, not stream 1's work
    seen.push_back(e.correlation);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(CommandBuffers, AThunkInTwoGraphsIsAnError) {
  CommandBuffer first, second;
  first.thunks = {0, 1};
  first.deps = {{}, {0}};
  second.thunks = {1, 2};
  second.deps = {{}, {}};
  auto laid = lay_out_command_buffers({diamond()}, {{first, second}}, 1);
  ASSERT_FALSE(laid.is_ok());
  EXPECT_NE(laid.status().message().find("thunk 1 is a node of graphs 0 and 1"), std::string::npos)
      << laid.status().message();
}

TEST(CommandBuffers, ThunksOutsideGraphsKeepTheirStreamsAndOrder) {
  sched::DeviceProgram p = diamond();
  CommandBuffer g;
  g.thunks = {1, 2};
  g.deps = {{}, {}};
  auto laid = lay_out_command_buffers({p}, {{g}}, 2);
  ASSERT_TRUE(laid.is_ok());
  const auto& role = laid->role[0];
  const auto& original = laid->original[0];
  ASSERT_FALSE(role.empty());
  EXPECT_EQ(role.front(), LaunchRole::kStream);
  EXPECT_EQ(original.front(), 0u);
  EXPECT_EQ(role.back(), LaunchRole::kStream);
  EXPECT_EQ(original.back(), 3u);
  EXPECT_EQ(laid->devices[0].thunks.back().stream, 0);
}

TEST(CommandBuffers, TheH200ModelCarriesTheFittedLaunchGaps) {
  auto m = load_device_model("h200");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_DOUBLE_EQ(m->graph_launch_us, 4.502);
  EXPECT_DOUBLE_EQ(m->graph_node_gap_us, -0.068);  // an overlap: signed in the device file
  EXPECT_DOUBLE_EQ(m->graph_node_gap_after_pdl_launch_us, -0.48);
  EXPECT_EQ(m->graph_concurrency, 1);
}

}  // namespace
}  // namespace sl::sim
