// Verifier rules for data, elementwise, compute and control-flow ops.

#include <gtest/gtest.h>

#include "tests/hlo/verify_test_util.h"

namespace sl::hlo {
namespace {

using testing::expect_error;
using testing::expect_valid;

std::string entry(std::string_view body) {
  return "HloModule m\n\nENTRY %main {\n" + std::string(body) + "}\n";
}

TEST(VerifyOps, ValidForms) {
  expect_valid(R"(HloModule m

%max {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %mx = f32[] maximum(%a, %b)
}

%cond {
  %st = (f32[2,3], s32[]) parameter(0)
  %i = s32[] get-tuple-element(%st), index=1
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body {
  %st = (f32[2,3], s32[]) parameter(0)
  %v = f32[2,3] get-tuple-element(%st), index=0
  %i = s32[] get-tuple-element(%st), index=1
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %v1 = f32[2,3] exponential(%v)
  ROOT %t = (f32[2,3], s32[]) tuple(%v1, %i1)
}

%callee {
  %x = f32[2,3] parameter(0)
  ROOT %n = f32[2,3] negate(%x)
}

ENTRY %main {
  %p = f32[2,3] parameter(0)
  %w = f32[3,4] parameter(1)
  %d = f32[2,4] dot(%p, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bd = f32[5,2,4] parameter(2)
  %bw = f32[5,4,6] parameter(3)
  %bdot = f32[5,2,6] dot(%bd, %bw), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  %c = f32[] constant(1.5)
  %b = f32[2,3] broadcast(%c), dimensions={}
  %row = f32[3] parameter(4)
  %b2 = f32[2,3] broadcast(%row), dimensions={1}
  %s = f32[2,3] add(%p, %b)
  %sub = f32[2,3] subtract(%s, %b2)
  %cmp = pred[2,3] compare(%s, %p), direction=GT
  %sel = f32[2,3] select(%cmp, %s, %p)
  %tr = f32[3,2] transpose(%sel), dimensions={1,0}
  %rs = f32[6] reshape(%tr)
  %sl = f32[2] slice(%rs), slice={[1:5:2]}
  %cat = f32[8] concatenate(%rs, %sl), dimensions={0}
  %io = s32[2,3] iota(), iota_dimension=1
  %cv = f32[2,3] convert(%io)
  %zero = s32[] constant(0)
  %ds = f32[1,3] dynamic-slice(%cv, %zero, %zero), dynamic_slice_sizes={1,3}
  %dus = f32[2,3] dynamic-update-slice(%cv, %ds, %zero, %zero)
  %init = f32[] constant(0)
  %red = f32[2] reduce(%dus, %init), dimensions={1}, to_apply=%max
  %i0 = s32[] constant(0)
  %st = (f32[2,3], s32[]) tuple(%sub, %i0)
  %wh = (f32[2,3], s32[]) while(%st), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"3"}}
  %cl = f32[2,3] call(%p), to_apply=%callee
  %cp = f32[2,3] copy(%cl)
  %rid = u32[] replica-id()
  %pid = u32[] partition-id()
  ROOT %out = (f32[2,4], f32[5,2,6], f32[8], f32[2], (f32[2,3], s32[]), f32[2,3], u32[], u32[]) tuple(%d, %bdot, %cat, %red, %wh, %cp, %rid, %pid)
}
)");
}

TEST(VerifyOps, BinaryOperandsSameShape) {
  std::string text = entry(R"(  %a = f32[4] parameter(0)
  %b = f32[8] parameter(1)
  ROOT %add = f32[4] add(%a, %b)
)");
  expect_error(text, "%add =", "add operands must have the same shape, but operand 0 (%a) is f32[4] and operand 1 (%b) is f32[8]");
}

TEST(VerifyOps, BinaryOperandTypes) {
  std::string text = entry(R"(  %a = f32[4] parameter(0)
  %b = s32[4] parameter(1)
  ROOT %mul = f32[4] multiply(%a, %b)
)");
  expect_error(text, "%mul =", "multiply operands must have the same shape");
}

TEST(VerifyOps, ElementwiseResultShape) {
  std::string text = entry(R"(  %a = f32[4] parameter(0)
  ROOT %neg = f32[5] negate(%a)
)");
  expect_error(text, "%neg =", "negate result shape f32[5] does not match the inferred shape f32[4]");
}

TEST(VerifyOps, ExpNeedsFloats) {
  std::string text = entry(R"(  %a = s32[4] parameter(0)
  ROOT %e = s32[4] exponential(%a)
)");
  expect_error(text, "%e =", "exponential needs a floating-point or complex type, but its operands are s32");
}

TEST(VerifyOps, CompareProducesPred) {
  std::string text = entry(R"(  %a = f32[4] parameter(0)
  ROOT %c = f32[4] compare(%a, %a), direction=EQ
)");
  expect_error(text, "%c =", "compare result shape f32[4] does not match the inferred shape pred[4]");
}

TEST(VerifyOps, SelectPredicateShape) {
  std::string text = entry(R"(  %a = f32[4] parameter(0)
  %m = pred[2] parameter(1)
  ROOT %s = f32[4] select(%m, %a, %a)
)");
  expect_error(text, "%s =", "select predicate pred[2] must be pred[] or pred with the dimensions of f32[4]");
}

TEST(VerifyOps, DotResultShape) {
  std::string text = entry(R"(  %a = f32[2,3] parameter(0)
  %b = f32[3,4] parameter(1)
  ROOT %d = f32[2,3] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)");
  expect_error(text, "%d =", "dot result shape f32[2,3] does not match the inferred shape f32[2,4]");
}

TEST(VerifyOps, DotContractingSizes) {
  std::string text = entry(R"(  %a = f32[2,3] parameter(0)
  %b = f32[5,4] parameter(1)
  ROOT %d = f32[2,4] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)");
  expect_error(text, "%d =", "dot contracting dimension sizes differ: lhs dimension 1 is 3 but rhs dimension 0 is 5");
}

TEST(VerifyOps, DotDimensionOutOfRange) {
  std::string text = entry(R"(  %a = f32[2,3] parameter(0)
  %b = f32[3,4] parameter(1)
  ROOT %d = f32[2,4] dot(%a, %b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
)");
  expect_error(text, "%d =", "dot lhs contracting dimension 2 is out of range for f32[2,3] of rank 2");
}

TEST(VerifyOps, BroadcastDimensionSizes) {
  std::string text = entry(R"(  %a = f32[3] parameter(0)
  ROOT %b = f32[3,2] broadcast(%a), dimensions={1}
)");
  expect_error(text, "%b =", "broadcast operand dimension 0 (size 3) does not match result dimension 1 (size 2)");
}

TEST(VerifyOps, BroadcastDimensionCount) {
  std::string text = entry(R"(  %a = f32[3] parameter(0)
  ROOT %b = f32[3,2] broadcast(%a), dimensions={}
)");
  expect_error(text, "%b =", "broadcast operand f32[3] has rank 1 but dimensions= lists 0 entries");
}

TEST(VerifyOps, ReshapeElementCount) {
  std::string text = entry(R"(  %a = f32[2,3] parameter(0)
  ROOT %r = f32[7] reshape(%a)
)");
  expect_error(text, "%r =", "reshape from f32[2,3] (6 elements) to f32[7] (7 elements) changes the element count");
}

TEST(VerifyOps, TransposePermutation) {
  std::string text = entry(R"(  %a = f32[2,3] parameter(0)
  ROOT %t = f32[3,2] transpose(%a), dimensions={1,1}
)");
  expect_error(text, "%t =", "transpose dimensions={1,1} is not a permutation of the 2 dimensions of f32[2,3]");
}

TEST(VerifyOps, TransposeResultShape) {
  std::string text = entry(R"(  %a = f32[2,3] parameter(0)
  ROOT %t = f32[2,3] transpose(%a), dimensions={1,0}
)");
  expect_error(text, "%t =", "transpose result shape f32[2,3] does not match the inferred shape f32[3,2]");
}

TEST(VerifyOps, SliceBounds) {
  std::string text = entry(R"(  %a = f32[4] parameter(0)
  ROOT %s = f32[3] slice(%a), slice={[2:5]}
)");
  expect_error(text, "%s =", "slice dimension 0 range [2:5:1] is invalid for size 4");
}

TEST(VerifyOps, SliceResultShape) {
  std::string text = entry(R"(  %a = f32[8] parameter(0)
  ROOT %s = f32[4] slice(%a), slice={[0:8:3]}
)");
  expect_error(text, "%s =", "slice result shape f32[4] does not match the inferred shape f32[3]");
}

TEST(VerifyOps, DynamicSliceIndices) {
  std::string text = entry(R"(  %a = f32[4,4] parameter(0)
  %i = s32[] parameter(1)
  ROOT %ds = f32[2,2] dynamic-slice(%a, %i), dynamic_slice_sizes={2,2}
)");
  expect_error(text, "%ds =", "dynamic-slice needs 2 start index operands (one per dimension), but has 1");
}

TEST(VerifyOps, DynamicUpdateSliceTooBig) {
  std::string text = entry(R"(  %a = f32[4,4] parameter(0)
  %u = f32[5,1] parameter(1)
  %i = s32[] parameter(2)
  ROOT %dus = f32[4,4] dynamic-update-slice(%a, %u, %i, %i)
)");
  expect_error(text, "%dus =", "dynamic-update-slice update dimension 0 (size 5) exceeds the operand size 4");
}

TEST(VerifyOps, ConcatenateMismatch) {
  std::string text = entry(R"(  %a = f32[2,3] parameter(0)
  %b = f32[2,4] parameter(1)
  ROOT %c = f32[4,3] concatenate(%a, %b), dimensions={0}
)");
  expect_error(text, "%c =", "concatenate operand 1 (f32[2,4]) does not match operand 0 (f32[2,3]) outside dimension 0");
}

TEST(VerifyOps, ConcatenateResultShape) {
  std::string text = entry(R"(  %a = f32[2,3] parameter(0)
  %b = f32[1,3] parameter(1)
  ROOT %c = f32[4,3] concatenate(%a, %b), dimensions={0}
)");
  expect_error(text, "%c =", "concatenate result shape f32[4,3] does not match the inferred shape f32[3,3]");
}

TEST(VerifyOps, GetTupleElementIndex) {
  std::string text = entry(R"(  %a = (f32[2], s32[]) parameter(0)
  ROOT %g = f32[2] get-tuple-element(%a), index=2
)");
  expect_error(text, "%g =", "get-tuple-element index 2 is out of range for a tuple of 2 elements ((f32[2], s32[]))");
}

TEST(VerifyOps, GetTupleElementShape) {
  std::string text = entry(R"(  %a = (f32[2], s32[]) parameter(0)
  ROOT %g = f32[2] get-tuple-element(%a), index=1
)");
  expect_error(text, "%g =", "get-tuple-element result shape f32[2] does not match the inferred shape s32[]");
}

TEST(VerifyOps, TupleShape) {
  std::string text = entry(R"(  %a = f32[2] parameter(0)
  ROOT %t = (f32[2], f32[2]) tuple(%a)
)");
  expect_error(text, "%t =", "tuple result shape (f32[2], f32[2]) does not match the inferred shape (f32[2])");
}

TEST(VerifyOps, IotaDimension) {
  std::string text = entry(R"(  ROOT %io = s32[4] iota(), iota_dimension=1
)");
  expect_error(text, "%io =", "iota_dimension 1 is out of range for s32[4] of rank 1");
}

TEST(VerifyOps, ConvertKeepsDimensions) {
  std::string text = entry(R"(  %a = s32[4] parameter(0)
  ROOT %c = f32[2,2] convert(%a)
)");
  expect_error(text, "%c =", "convert result f32[2,2] must have the dimensions of its operand s32[4]");
}

TEST(VerifyOps, ReplicaIdShape) {
  std::string text = entry(R"(  ROOT %r = s32[] replica-id()
)");
  expect_error(text, "%r =", "replica-id result shape s32[] does not match the inferred shape u32[]");
}

TEST(VerifyOps, ReduceDimensionsAndComputation) {
  std::string text = R"(HloModule m

%add_bf16 {
  %a = bf16[] parameter(0)
  %b = bf16[] parameter(1)
  ROOT %r = bf16[] add(%a, %b)
}

ENTRY %main {
  %x = f32[2,3] parameter(0)
  %z = f32[] constant(0)
  %bad_dim = f32[2] reduce(%x, %z), dimensions={2}, to_apply=%add_bf16
  ROOT %bad_fn = f32[2] reduce(%x, %z), dimensions={1}, to_apply=%add_bf16
}
)";
  expect_error(text, "%bad_dim =", "reduce dimension 2 is out of range for input f32[2,3] of rank 2");
  expect_error(text, "%bad_fn =", "reduce computation %add_bf16 parameter 0 has shape bf16[], but the input has element type f32");
}

TEST(VerifyOps, CallArguments) {
  std::string text = R"(HloModule m

%callee {
  %x = f32[2] parameter(0)
  ROOT %n = f32[2] negate(%x)
}

ENTRY %main {
  %p = f32[3] parameter(0)
  ROOT %c = f32[3] call(%p), to_apply=%callee
}
)";
  expect_error(text, "%c =", "call argument 0 has shape f32[3], but parameter 0 of called computation %callee is f32[2]");
  expect_error(text, "%c =", "call called computation %callee returns f32[2], but f32[3] is required");
}

TEST(VerifyOps, WhileSignatures) {
  std::string text = R"(HloModule m

%cond {
  %st = (f32[2], s32[]) parameter(0)
  ROOT %i = s32[] get-tuple-element(%st), index=1
}

%body {
  %st = (f32[2], s32[]) parameter(0)
  ROOT %v = f32[2] get-tuple-element(%st), index=0
}

ENTRY %main {
  %init = (f32[2], s32[]) parameter(0)
  ROOT %w = (f32[2], s32[]) while(%init), condition=%cond, body=%body
}
)";
  expect_error(text, "%w =", "while condition computation %cond returns s32[], but pred[] is required");
  expect_error(text, "%w =", "while body computation %body returns f32[2], but (f32[2], s32[]) is required");
}

TEST(VerifyOps, WhileBodyParameter) {
  std::string text = R"(HloModule m

%cond {
  %st = (f32[2], s32[]) parameter(0)
  ROOT %t = pred[] constant(false)
}

%body {
  %st = (f32[3], s32[]) parameter(0)
  ROOT %v = (f32[3], s32[]) copy(%st)
}

ENTRY %main {
  %init = (f32[2], s32[]) parameter(0)
  ROOT %w = (f32[2], s32[]) while(%init), condition=%cond, body=%body
}
)";
  expect_error(text, "%w =", "while argument 0 has shape (f32[2], s32[]), but parameter 0 of body computation %body is (f32[3], s32[])");
}

TEST(VerifyOps, FusionSignature) {
  std::string text = R"(HloModule m

%fused {
  %x = f32[2] parameter(0)
  %y = f32[2] parameter(1)
  ROOT %m = f32[2] multiply(%x, %y)
}

ENTRY %main {
  %a = f32[2] parameter(0)
  ROOT %f = f32[2] fusion(%a), kind=kLoop, calls=%fused
}
)";
  expect_error(text, "%f =", "fusion passes 1 argument to fused computation %fused, which takes 2 parameters");
}

TEST(VerifyOps, SignatureFromText) {
  std::string text = R"(HloModule m

ENTRY %main (a: f32[4], b: bf16[4]) -> f32[8] {
  %a = f32[4] parameter(0)
  %b = f32[4] parameter(1)
  ROOT %s = f32[4] add(%a, %b)
}
)";
  expect_error(text, "%main (", "computation %main declares parameter 1 as bf16[4], but parameter(1) is f32[4]");
  expect_error(text, "%main (", "computation %main declares result f32[8], but its ROOT is f32[4]");
  expect_valid(R"(HloModule m

ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%a)
}
)");
}

TEST(VerifyOps, ConditionalBranches) {
  std::string text = R"(HloModule m

%on_true {
  %t = f32[2] parameter(0)
  ROOT %n = f32[2] negate(%t)
}

%on_false {
  %f = f32[3] parameter(0)
  ROOT %c = f32[3] copy(%f)
}

ENTRY %main {
  %pred = pred[] parameter(0)
  %x = f32[2] parameter(1)
  %y = f32[2] parameter(2)
  ROOT %cond = f32[2] conditional(%pred, %x, %y), true_computation=%on_true, false_computation=%on_false
}
)";
  expect_error(text, "%cond =", "conditional argument 0 has shape f32[2], but parameter 0 of branch 1 computation %on_false is f32[3]");
  expect_error(text, "%cond =", "conditional branch 1 computation %on_false returns f32[3], but f32[2] is required");
}

TEST(VerifyOps, ConditionalSelector) {
  std::string text = R"(HloModule m

%branch {
  %t = f32[2] parameter(0)
  ROOT %n = f32[2] negate(%t)
}

ENTRY %main {
  %sel = f32[] parameter(0)
  %x = f32[2] parameter(1)
  ROOT %cond = f32[2] conditional(%sel, %x), branch_computations={%branch}
}
)";
  expect_error(text, "%cond =", "conditional selector must be pred[] or s32[], but is f32[]");
}

TEST(VerifyOps, BitcastKeepsSize) {
  std::string text = entry(R"(  %a = f32[4] parameter(0)
  ROOT %b = s32[2] bitcast(%a)
)");
  expect_error(text, "%b =", "bitcast from f32[4] (16 bytes) to s32[2] (8 bytes) changes the size");
}

TEST(VerifyOps, GemmCustomCallOperands) {
  std::string text = entry(R"(  %a = bf16[4,8] parameter(0)
  ROOT %g = (bf16[4,4], s8[1024]) custom-call(%a), custom_call_target="__cublas$gemm"
)");
  expect_error(text, "%g =", "custom-call needs at least 2 operands but has 1");
}

}  // namespace
}  // namespace sl::hlo
