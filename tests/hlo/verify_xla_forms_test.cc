// Forms XLA's verifier accepts that the verifier once refused: the in-place
// collective-permute, dynamic-slice with one index vector, reducers over
// arrays, the one-operand tuple all-to-all.

#include <gtest/gtest.h>

#include "tests/hlo/verify_test_util.h"

namespace sl::hlo {
namespace {

using testing::expect_error;
using testing::expect_valid;

constexpr std::string_view kInPlacePermute = R"(HloModule m, replica_count=4
ENTRY e {
  input = f32[8,4] parameter(0)
  output = f32[16,4] parameter(1)
  z = s32[] constant(0)
  h = s32[] constant(8)
  in_off = (s32[], s32[]) tuple(z, z)
  out_off = (s32[], s32[]) tuple(h, z)
  %cp = f32[16,4] collective-permute(input, output, in_off, out_off), source_target_pairs={{0,1},{1,2}}, slice_sizes={{8,4}}
  start = (f32[8,4], f32[16,4], u32[], u32[]) collective-permute-start(input, output, in_off, out_off), source_target_pairs={{0,1}}, slice_sizes={{8,4}}
  ROOT done = f32[16,4] collective-permute-done(start)
})";

TEST(VerifyXlaForms, InPlaceCollectivePermute) { expect_valid(kInPlacePermute); }

TEST(VerifyXlaForms, InPlaceCollectivePermuteResultIsTheOutputOperand) {
  expect_error(R"(HloModule m, replica_count=4
ENTRY e {
  input = f32[8,4] parameter(0)
  output = f32[16,4] parameter(1)
  z = s32[] constant(0)
  off = (s32[], s32[]) tuple(z, z)
  ROOT %cp = f32[8,4] collective-permute(input, output, off, off), source_target_pairs={{0,1}}
})",
               "%cp =", "must equal its output operand f32[16,4]");
}

TEST(VerifyXlaForms, RepeatedIdsOnlyForSeveralSlices) {
  const std::string_view two_slices = R"(HloModule m, replica_count=4
ENTRY e {
  input = f32[8,4] parameter(0)
  output = f32[16,4] parameter(1)
  z = s32[] constant(0)
  t = (s32[], s32[]) tuple(z, z)
  off = ((s32[], s32[]), (s32[], s32[])) tuple(t, t)
  ROOT %cp = f32[16,4] collective-permute(input, output, off, off), source_target_pairs={{0,1},{0,1}}
})";
  expect_valid(two_slices);
  expect_error(R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[4] parameter(0)
  ROOT %cp = f32[4] collective-permute(p), source_target_pairs={{0,1},{0,2}}
})",
               "%cp =", "source 0 appears more than once");
}

TEST(VerifyXlaForms, DynamicSliceWithOneIndexVector) {
  expect_valid(R"(HloModule m
ENTRY e {
  p = s32[2,2,258] parameter(0)
  i = s32[3] parameter(1)
  u = s32[1,1,4] parameter(2)
  ds = s32[2,2,8] dynamic-slice(p, i), dynamic_slice_sizes={2,2,8}
  ROOT dus = s32[2,2,258] dynamic-update-slice(p, u, i)
})");
  expect_error(R"(HloModule m
ENTRY e {
  p = s32[2,2,258] parameter(0)
  i = s32[2] parameter(1)
  ROOT %ds = s32[2,2,8] dynamic-slice(p, i), dynamic_slice_sizes={2,2,8}
})",
               "%ds =", "needs 3 start index operands");
}

TEST(VerifyXlaForms, AllReduceWithAnArrayReducerAndTupleAllToAll) {
  expect_valid(R"(HloModule m, replica_count=2
add {
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  ROOT s = s32[4] add(a, b)
}
ENTRY e {
  p = s32[4] parameter(0)
  ar = s32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add
  ROOT a2a = (s32[4]) all-to-all(ar), replica_groups={}
})");
}

}  // namespace
}  // namespace sl::hlo
