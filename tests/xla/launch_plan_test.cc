// plan_from_thunks ties each thunk of XLA's dump to the instruction it came
// from, walking the computation in order.

#include "core/xla/launch_plan.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sl::xla
