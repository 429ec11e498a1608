// What a module's thunk dump says about how its instructions are launched
// (app/common/command_buffer_setup.h, launched_instructions), on a module XLA
// dumped on an H200 (tests/corpus/captures/calib_scan_copy: a scan whose body
// is one command buffer, its first command a dynamic-slice copy on another
// stream, with the graph's edges in prev=/next=).

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "app/common/command_buffer_setup.h"
#include "core/hlo/parser.h"
#include "sim/command_buffers.h"

namespace sl::app {
namespace {

const std::string kScanCopyModule = (std::filesystem::path(SL_SOURCE_DIR) /
                             "tests/corpus/captures/calib_scan_copy/module_0000.jit_f.sm_9.0a_gpu_after_optimizations.txt")
                                .string();

TEST(LaunchedInstructions, AGraphsFirstLaunchAndTheNodesAfterAPredecessorAreToldApart) {
  const LaunchedInstructions l = launched_instructions(kScanCopyModule);
  ASSERT_TRUE(l.known);
  EXPECT_EQ(l.in_graph.size(), 6u);
  // 006/008: the body's first command; its idle time before is the graph launch's.
  EXPECT_EQ(l.graph_first, (std::unordered_set<std::string>{"fusion-start"}));
  // 011, 012, 013 wait for a predecessor of the graph; 009 and 017 have none
  // but are not the first launch, so they are neither.
  EXPECT_EQ(l.graph_after,
            (std::unordered_set<std::string>{"gemm_fusion_dot_general.3", "loop_tanh_fusion", "fusion-start.1"}));
  EXPECT_TRUE(l.in_graph.count("gemm_fusion_dot_general.2") && l.in_graph.count("loop_add_fusion"));
  // XLA launches gemm_fusion_dot_general.3 (011) with programmatic dependent
  // launch (xla.pdl_launch="true"); loop_tanh_fusion (012) follows it.
  EXPECT_EQ(l.graph_after_pdl_launch, (std::unordered_set<std::string>{"loop_tanh_fusion"}));
  // The loop's condition and the copies before it run outside any graph.
  EXPECT_EQ(l.in_graph.count("loop_broadcast_fusion"), 0u);
}

// The body's graph marks its dynamic-slice copies (006/008, 013/015) as
// memcpy nodes and is recorded again before each launch; laid out, the
// kernels that run right after a copy are the first GEMM (009) and the add
// (017), though the DAG orders neither after its copy.
TEST(LaunchedInstructions, AGraphsMemcpyNodesAndTheKernelsRightAfterThemAreMarked) {
  auto module = hlo::parse_program_file(kScanCopyModule);
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  auto lowered = sched::lower(*module, {});
  ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
  auto cb = command_buffer_setup(kScanCopyModule, *module, *lowered, "auto");
  ASSERT_TRUE(cb.is_ok()) << cb.status().message();
  ASSERT_FALSE(cb->setup.graphs.empty());
  ASSERT_FALSE(cb->setup.graphs[0].empty());
  const sim::CommandBuffer& body = cb->setup.graphs[0][0];
  EXPECT_GT(body.rerecorded_commands, 0);
  ASSERT_EQ(body.copies.size(), body.thunks.size());
  std::vector<std::string> copies;
  for (size_t k = 0; k < body.thunks.size(); ++k) {
    if (body.copies[k]) copies.emplace_back(lowered->devices[0].thunks[body.thunks[k]].attributed_name);
  }
  EXPECT_EQ(copies, (std::vector<std::string>{"fusion-start", "fusion-start.1"}));

  auto laid = sim::lay_out_command_buffers(lowered->devices, cb->setup.graphs, 1);
  ASSERT_TRUE(laid.is_ok()) << laid.status().message();
  std::vector<std::string> after_copy;
  for (size_t i = 0; i < laid->after_copy[0].size(); ++i) {
    if (laid->graph_of[0][i] == 0 && laid->after_copy[0][i]) {
      after_copy.emplace_back(laid->devices[0].thunks[i].attributed_name);
    }
  }
  EXPECT_EQ(after_copy, (std::vector<std::string>{"gemm_fusion_dot_general.2", "loop_add_fusion"}));
}

TEST(LaunchedInstructions, AModuleWithoutADumpSaysNothingOfItsGraphs) {
  const LaunchedInstructions l = launched_instructions("/nonexistent/module_0000.jit_f.sm_9.0a_gpu_after_optimizations.txt");
  EXPECT_FALSE(l.known);
  EXPECT_TRUE(l.graph_first.empty() && l.graph_after.empty() && l.graph_after_pdl_launch.empty());
}

}  // namespace
}  // namespace sl::app
