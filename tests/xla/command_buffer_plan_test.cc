// Command buffers in the launch plan: graph launches and the DAG between
// their nodes, from XLA's thunk dumps.

#include <gtest/gtest.h>

#include <string>

#include "core/hlo/parser.h"
#include "core/xla/launch_plan.h"
#include "core/xla/thunk_sequence.h"

namespace sl::xla {
namespace {

const std::string kCorpus = std::string(SL_SOURCE_DIR) + "/tests/corpus";

TEST(CommandBufferPlan, EdgesFromPrevAndNextAreUnitedAndPassThroughAsyncDone) {
  // 4 waits for 1 by 1's next=, for 2 by its own prev=; 3 (an async done,
  // no launch) passes 2 on to 5.
  auto seq = parse_thunk_sequence(
      "000: kCommandBuffer [source | sink]\n"
      "    001: kCustomKernel [source       | next=004 (3)] a grid: [1, 1, 1]\n"
      "    002: kCustomKernel [source       | next=003 (1)] b grid: [1, 1, 1]\n"
      "    003: kAsyncDone    [prev=002 (1) | next=005 (2)] async_id=9\n"
      "    004: kCustomKernel [prev=002 (2) | sink        ] c grid: [1, 1, 1]\n"
      "    005: kCustomKernel [prev=003 (2) | sink        ] d grid: [1, 1, 1]\n"
      "006: kCustomKernel [source | sink] e grid: [1, 1, 1]\n",
      "t.txt");
  ASSERT_TRUE(seq.is_ok()) << seq.status().message();
  LaunchPlan plan = plan_from_thunks(*seq, nullptr);
  ASSERT_EQ(plan.launches.size(), 5u);
  EXPECT_EQ(plan.graph_launches, 1);
  EXPECT_EQ(plan.launches[0].graph, 0);
  EXPECT_TRUE(plan.launches[0].graph_deps.empty());
  EXPECT_EQ(plan.launches[2].graph_deps, (std::vector<int64_t>{0, 1}));  // c after a and b
  EXPECT_EQ(plan.launches[3].graph_deps, (std::vector<int64_t>{1}));     // d after b, through the done
  EXPECT_EQ(plan.launches[4].graph, -1);                                  // e is launched alone
}

TEST(CommandBufferPlan, EachLoopTripLaunchesTheBodysGraphAgain) {
  const std::string dir = kCorpus + "/jax/large/scan_rnn";
  const std::string module_path = dir + "/module_0000.jit_f.sm_9.0a_gpu_after_optimizations.txt";
  auto module = hlo::parse_program_file(module_path);
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  auto seq = read_thunk_sequence(thunk_sequence_path_for(module_path, true));
  ASSERT_TRUE(seq.is_ok()) << seq.status().message();
  LaunchPlan plan = plan_from_thunks(*seq, &*module);
  EXPECT_EQ(plan.graph_launches, 128);  // lax.scan of 128 trips, one graph each
  // The async copy XLA put on computation_stream[1] is a node of the trip's graph.
  bool copy_on_stream_1_in_graph = false;
  for (const PlannedLaunch& l : plan.launches) {
    copy_on_stream_1_in_graph |= l.stream == "computation_stream[1]" && l.graph >= 0 && l.kind == LaunchKind::kCopy;
  }
  EXPECT_TRUE(copy_on_stream_1_in_graph);
}

TEST(CommandBufferPlan, TheSmallTransformersStepIsOneGraphOf65Nodes) {
  const std::string dir = kCorpus + "/captures/transformer_small";
  const std::string module_path = dir + "/module_0000.jit_step.sm_9.0a_gpu_after_optimizations.txt";
  auto module = hlo::parse_program_file(module_path);
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  auto seq = read_thunk_sequence(thunk_sequence_path_for(module_path, true));
  ASSERT_TRUE(seq.is_ok()) << seq.status().message();
  LaunchPlan plan = plan_from_thunks(*seq, &*module);
  EXPECT_EQ(plan.graph_launches, 1);
  ASSERT_EQ(plan.launches.size(), 65u);
  int64_t edges = 0;
  for (const PlannedLaunch& l : plan.launches) {
    EXPECT_EQ(l.graph, 0);
    for (int64_t d : l.graph_deps) {
      EXPECT_LT(d, &l - plan.launches.data());  // edges point back: the dump's order is topological
      ++edges;
    }
  }
  EXPECT_GT(edges, 64);  // more than a chain: the DAG has branches
}

}  // namespace
}  // namespace sl::xla
