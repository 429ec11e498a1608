// What a module's thunk dump says about how its instructions are launched
// (app/common/command_buffer_setup.h, launched_instructions), on a module XLA
// dumped on an H200 (tests/corpus/captures/calib_scan_copy: a scan whose body
// is one command buffer, its first command a dynamic-slice copy on another
// stream, with the graph's edges in prev=/next=).

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "app/common/command_buffer_setup.h"

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

TEST(LaunchedInstructions, AModuleWithoutADumpSaysNothingOfItsGraphs) {
  const LaunchedInstructions l = launched_instructions("/nonexistent/module_0000.jit_f.sm_9.0a_gpu_after_optimizations.txt");
  EXPECT_FALSE(l.known);
  EXPECT_TRUE(l.graph_first.empty() && l.graph_after.empty() && l.graph_after_pdl_launch.empty());
}

}  // namespace
}  // namespace sl::app
