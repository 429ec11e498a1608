// The trace-driven simulator on a command buffer: a node the measured run
// never ran takes the model's time, and overlaps its predecessor once.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sim/sim_backend.h"
#include "tests/sim/sim_test_util.h"

namespace sl::sim {
namespace {

// Three kernels of 1000 bytes (1000 ns alone on the test device), one graph a -> b -> c.
struct OneGraph {
  sched::LoweredProgram program;
  LaunchSetup launch;
  OneGraph() {
    sched::DeviceProgram p;
    p.thunks = {testing::mem_kernel(0, 1000, "a"), testing::mem_kernel(0, 1000, "b"),
                testing::mem_kernel(0, 1000, "c")};
    program.devices = {p};
    CommandBuffer g;
    g.thunks = {0, 1, 2};
    g.deps = {{}, {0}, {1}};
    launch.xla_executable = true;
    launch.graphs = {{g}};
  }
};

// Each kernel's duration, by its thunk's name.
std::map<std::string, int64_t> durations(exec::Backend& backend, const sched::LoweredProgram& program) {
  auto out = backend.run(program, exec::RunOptions{});
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  std::map<std::string, int64_t> by_name;
  if (!out.is_ok()) return by_name;
  const auto& thunks = program.devices[0].thunks;
  for (const trace::Event& e : out->trace.events) {
    if (e.correlation >= 0 && static_cast<size_t>(e.correlation) < thunks.size()) {
      by_name[std::string(thunks[static_cast<size_t>(e.correlation)].attributed_name)] = e.duration_ns();
    }
  }
  return by_name;
}

// The model overlaps a node 200 ns into its predecessor's tail, taking the
// overlap off the node. The measured run ran only a, as the model costs it,
// so b and c take the model's time: the overlap comes off them once, as in
// the model's own run, not a second time off a duration it already left.
TEST(TraceDrivenGraph, AModelledNodeOverlapsItsPredecessorOnce) {
  DeviceModel m = testing::simple_model();
  m.graph_node_gap_us = -0.2;
  m.graph_node_gap_after_pdl_launch_us = -0.2;
  const OneGraph g;
  auto model_only = make_sim_backend(m, g.launch);
  const std::map<std::string, int64_t> modelled = durations(*model_only, g.program);
  ASSERT_EQ(modelled.size(), 3u);
  EXPECT_EQ(modelled.at("a"), 1000);
  EXPECT_EQ(modelled.at("b"), 800);

  MeasuredTimes measured;
  measured.ns_per_step["a"] = 1000;
  measured.busy_ns_per_step["a"] = 1000;
  measured.launches_per_step["a"] = 1;
  measured.steps = 1;
  auto driven = make_trace_driven_sim_backend(m, measured, g.launch);
  const std::map<std::string, int64_t> replayed = durations(*driven, g.program);
  ASSERT_EQ(replayed.size(), 3u);
  EXPECT_EQ(replayed.at("a"), 1000);
  EXPECT_EQ(replayed.at("b"), modelled.at("b"));
  EXPECT_EQ(replayed.at("c"), modelled.at("c"));
}

}  // namespace
}  // namespace sl::sim
