// plan_from_thunks ties each thunk of XLA's dump to the instruction it came
// from, walking the computation in order.

#include "core/xla/launch_plan.h"

#include <gtest/gtest.h>

#include <string>

#include "core/hlo/parser.h"

namespace sl::xla {
namespace {

// Two cuBLAS calls in a row: their thunks carry no instruction name, so
// only the order ties each to its custom-call; each instruction is taken once.
TEST(LaunchPlan, ConsecutiveLibraryCallsTakeConsecutiveInstructions) {
  auto module = hlo::parse_program(R"(HloModule m, is_scheduled=true

ENTRY %main {
  %a = f32[4,4] parameter(0)
  %g1 = (f32[4,4], s8[0]) custom-call(%a, %a), custom_call_target="__cublas$gemm"
  %x1 = f32[4,4] get-tuple-element(%g1), index=0
  %g2 = (f32[4,4], s8[0]) custom-call(%x1, %a), custom_call_target="__cublas$gemm"
  ROOT %x2 = f32[4,4] get-tuple-element(%g2), index=0
}
)",
                                   "m.txt");
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  auto thunks = parse_thunk_sequence(
      "001: kCublasLtMatmul [source       | next=002 (1)] kCublasLtMatmul\n"
      "002: kCublasLtMatmul [prev=001 (1) | sink        ] kCublasLtMatmul\n",
      "t.txt");
  ASSERT_TRUE(thunks.is_ok()) << thunks.status().message();
  LaunchPlan plan = plan_from_thunks(*thunks, &*module);
  ASSERT_EQ(plan.launches.size(), 2u);
  EXPECT_EQ(plan.launches[0].kind, LaunchKind::kGemm);
  EXPECT_EQ(plan.launches[0].instruction, "g1");
  EXPECT_EQ(plan.launches[1].kind, LaunchKind::kGemm);
  EXPECT_EQ(plan.launches[1].instruction, "g2");
}

// XLA's WhileThunk syncs the host every trip only when the loop has no known
// trip count (it copies the predicate to the host). scan_rnn's loop has one
// (128): no sync. Without its module the trip count is unknown: the body's
// first launch and the first launch after the loop follow a sync.
TEST(LaunchPlan, AWhileWithoutAKnownTripCountSyncsTheHost) {
  const std::string dir = std::string(SL_SOURCE_DIR) + "/tests/corpus/jax/large/scan_rnn/";
  auto thunks = read_thunk_sequence(dir + "module_0000.jit_f.thunk_sequence.txt");
  ASSERT_TRUE(thunks.is_ok()) << thunks.status().message();
  auto module = hlo::parse_program_file(dir + "module_0000.jit_f.sm_9.0a_gpu_after_optimizations.txt");
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  auto syncs = [](const LaunchPlan& plan) {
    std::vector<size_t> out;
    for (size_t i = 0; i < plan.launches.size(); ++i) {
      if (plan.launches[i].host_sync_before) out.push_back(i);
    }
    return out;
  };
  const LaunchPlan known = plan_from_thunks(*thunks, &*module);
  EXPECT_EQ(known.loops_with_unknown_trip_count, 0);
  EXPECT_EQ(known.launches.size(), 3u + 128u * 7u);
  EXPECT_TRUE(syncs(known).empty());
  // Unknown: copy, copy, broadcast, the condition's compare, then (sync) one
  // trip, the body's 7 launches and the compare again, marked as repeated,
  // then (sync) nothing: the loop ends the module.
  const LaunchPlan unknown = plan_from_thunks(*thunks, nullptr);
  EXPECT_EQ(unknown.loops_with_unknown_trip_count, 1);
  ASSERT_EQ(unknown.launches.size(), 3u + 1u + 7u + 1u);
  EXPECT_EQ(syncs(unknown), (std::vector<size_t>{4}));
  ASSERT_EQ(unknown.repeated_trips.size(), 1u);
  EXPECT_EQ(unknown.repeated_trips[0].first, 4u);
  EXPECT_EQ(unknown.repeated_trips[0].end, 12u);
}

// With the trips a capture ran (run --kernel-times), a loop without a known
// trip count is planned as the condition and that many trips of the body and
// the condition, a sync after each condition; nothing is left to repeat.
TEST(LaunchPlan, MeasuredTripsExpandALoopWithoutAKnownTripCount) {
  auto module = hlo::parse_program(R"(HloModule m, is_scheduled=true

%cond (c: (s32[], f32[4])) -> pred[] {
  %c = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (b: (s32[], f32[4])) -> (s32[], f32[4]) {
  %b = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%b), index=0
  %x = f32[4] get-tuple-element(%b), index=1
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  %y = f32[4] add(%x, %x)
  ROOT %t = (s32[], f32[4]) tuple(%j, %y)
}

ENTRY %main {
  %a = f32[4] parameter(0)
  %zero = s32[] constant(0)
  %s = (s32[], f32[4]) tuple(%zero, %a)
  ROOT %w = (s32[], f32[4]) while(%s), condition=%cond, body=%body
}
)",
                                   "m.txt");
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  auto thunks = parse_thunk_sequence(
      "001: kWhile [source | sink]   \n"
      "condition:\n"
      "    002: kCustomKernel [source | sink] cond_k grid: [1, 1, 1] threads: [1, 1, 1]  shared_memory: 0 bytes\n"
      "  body:\n"
      "    003: kCustomKernel [source | sink] body_k grid: [1, 1, 1] threads: [1, 1, 1]  shared_memory: 0 bytes\n",
      "t.txt");
  ASSERT_TRUE(thunks.is_ok()) << thunks.status().message();
  const LaunchPlan plan = plan_from_thunks(*thunks, &*module, 1u << 22, {{"w", 3}});
  std::string kernels;
  for (const PlannedLaunch& l : plan.launches) kernels += l.kernel + (l.host_sync_before ? "*" : "") + " ";
  EXPECT_EQ(kernels, "cond_k body_k* cond_k body_k* cond_k body_k* cond_k ");
  EXPECT_TRUE(plan.repeated_trips.empty());
  EXPECT_EQ(plan.launches[0].condition_of, "w");
  EXPECT_EQ(plan.launches[1].condition_of, "");
}

// A command buffer holding a dynamic-slice fusion is recorded again before
// every launch (DynamicSliceFusionCmd::force_update): the plan counts its
// commands, kAsyncDone not one. The fusion's copy is a dynamic-slice launch;
// a buffer of kernels alone launches as recorded.
TEST(LaunchPlan, ABufferWithADynamicSliceIsRecordedAgainEachLaunch) {
  auto thunks = parse_thunk_sequence(
      "000: kCommandBuffer [source | next=000 (1)] \n"
      "    001: kCustomKernel [source | sink] a grid: [1, 1, 1] threads: [1, 1, 1]  shared_memory: 0 bytes\n"
      "    002: kCustomKernel [source | sink] b grid: [1, 1, 1] threads: [1, 1, 1]  shared_memory: 0 bytes\n"
      "000: kCommandBuffer [prev=000 (1) | sink] \n"
      "    003: kAsyncStart   [source       | next=007 (2)] stream=computation_stream[1], async_id=3\n"
      "        005: kDynamicSliceFusion [source | sink] params=1, results=1\n"
      "            004: kCopy [source | sink] kCopy\n"
      "    006: kAsyncDone    [source       | sink        ] async_id=3\n"
      "    007: kCustomKernel [prev=003 (2) | sink] c grid: [1, 1, 1] threads: [1, 1, 1]  shared_memory: 0 bytes\n",
      "t.txt");
  ASSERT_TRUE(thunks.is_ok()) << thunks.status().message();
  const LaunchPlan plan = plan_from_thunks(*thunks, nullptr);
  EXPECT_EQ(plan.graph_launches, 2);
  EXPECT_EQ(plan.rerecorded_commands, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(plan.retraced_commands, (std::vector<int64_t>{0, 0}));
  ASSERT_EQ(plan.launches.size(), 4u);
  EXPECT_FALSE(plan.launches[1].dynamic_slice);
  EXPECT_TRUE(plan.launches[2].dynamic_slice);
  EXPECT_EQ(plan.launches[2].kind, LaunchKind::kCopy);
  EXPECT_FALSE(plan.launches[3].dynamic_slice);
}

// A loop body as XLA writes it without Triton GEMMs (scan_rnn's): the cuBLAS
// call inside a dynamic-slice fusion is traced again at every re-recording;
// the one alone (its operands stay) and the copy's fusion are not.
TEST(LaunchPlan, CountsTheCublasCallsOfARecordedAgainBufferThatMove) {
  auto thunks = parse_thunk_sequence(
      "000: kCommandBuffer [source | sink] \n"
      "    006: kDynamicSliceFusion [source       | next=008 (1)] params=2, results=2\n"
      "        007: kCublasLtMatmul [source | sink] kCublasLtMatmul\n"
      "    008: kCublasLtMatmul     [prev=006 (1) | next=009 (1)] kCublasLtMatmul\n"
      "    009: kCustomKernel       [prev=008 (1) | next=011 (1)] wrapped_tanh grid: [512, 1, 1] threads: [128, 1, 1]"
      "  shared_memory: 0 bytes\n"
      "    011: kAsyncStart         [prev=009 (1) | sink        ] stream=computation_stream[0], async_id=11\n"
      "        013: kDynamicSliceFusion [source | sink] params=1, results=1\n"
      "            012: kCopy [source | sink] kCopy\n"
      "    014: kAsyncDone          [source       | sink        ] async_id=11\n"
      "    015: kCustomKernel       [source       | sink        ] loop_add_fusion grid: [1, 1, 1] threads: [1, 1, 1]"
      "  shared_memory: 0 bytes\n",
      "t.txt");
  ASSERT_TRUE(thunks.is_ok()) << thunks.status().message();
  const LaunchPlan plan = plan_from_thunks(*thunks, nullptr);
  EXPECT_EQ(plan.rerecorded_commands, (std::vector<int64_t>{5}));
  EXPECT_EQ(plan.retraced_commands, (std::vector<int64_t>{1}));
  EXPECT_EQ(plan.blas_commands, (std::vector<int64_t>{1})) << "the call alone; the sliced one is traced again";
}

}  // namespace
}  // namespace sl::xla
