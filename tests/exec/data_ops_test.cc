// Data-movement ops, reduce and dot against hand-computed values.

#include <gtest/gtest.h>

#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using testing::entry;
using testing::run_hlo;
using testing::shape_of;
using testing::values_of;

using V = std::vector<double>;

TEST(DataOps, IotaBroadcastReshapeTranspose) {
  EXPECT_EQ(values_of(run_hlo(entry("  ROOT i = s32[2,3] iota(), iota_dimension=1"))), (V{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(values_of(run_hlo(entry("  ROOT i = bf16[2,3] iota(), iota_dimension=0"))), (V{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(values_of(run_hlo(entry("  a = f32[2] constant({1, 2})\n"
                                    "  ROOT b = f32[2,3] broadcast(a), dimensions={0}"))),
            (V{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(values_of(run_hlo(entry("  a = f32[3] constant({1, 2, 3})\n"
                                    "  ROOT b = f32[2,3] broadcast(a), dimensions={1}"))),
            (V{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(values_of(run_hlo(entry("  a = s32[] constant(7)\n  ROOT b = s32[2,2] broadcast(a), dimensions={}"))),
            (V{7, 7, 7, 7}));
  auto r = run_hlo(entry("  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n  ROOT b = f32[3,2] reshape(a)"));
  EXPECT_EQ(values_of(r), (V{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(shape_of(r), "f32[3,2]");
  EXPECT_EQ(values_of(run_hlo(entry("  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
                                    "  ROOT b = f32[3,2] transpose(a), dimensions={1,0}"))),
            (V{1, 4, 2, 5, 3, 6}));
  // 3-D: out[i,j,k] = in[k,i,j] for dimensions={2,0,1}... here {1,2,0}: out dims = in dims [1],[2],[0].
  EXPECT_EQ(values_of(run_hlo(entry("  a = s32[2,2,2] iota(), iota_dimension=0\n"
                                    "  ROOT b = s32[2,2,2] transpose(a), dimensions={1,2,0}"))),
            (V{0, 1, 0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(values_of(run_hlo(entry("  a = f32[4] constant({1, 2, 3, 4})\n  ROOT b = f32[2,2] bitcast(a)"))),
            (V{1, 2, 3, 4}));
  EXPECT_EQ(values_of(run_hlo(entry("  a = f32[4] constant({1, 2, 3, 4})\n  ROOT b = f32[4] copy(a)"))),
            (V{1, 2, 3, 4}));
}

TEST(DataOps, SliceAndConcatenate) {
  EXPECT_EQ(values_of(run_hlo(entry("  a = s32[3,4] iota(), iota_dimension=1\n"
                                    "  b = s32[3,4] iota(), iota_dimension=0\n"
                                    "  c = s32[3,4] multiply(b, b)\n  d = s32[3,4] add(a, c)\n"
                                    "  ROOT s = s32[2,2] slice(d), slice={[1:3], [0:4:2]}"))),
            (V{1, 3, 4, 6}));
  EXPECT_EQ(values_of(run_hlo(entry("  a = f32[2,1] constant({{1}, {2}})\n  b = f32[2,2] constant({{3, 4}, {5, 6}})\n"
                                    "  ROOT c = f32[2,3] concatenate(a, b), dimensions={1}"))),
            (V{1, 3, 4, 2, 5, 6}));
  EXPECT_EQ(values_of(run_hlo(entry("  a = f32[1,2] constant({{1, 2}})\n  b = f32[2,2] constant({{3, 4}, {5, 6}})\n"
                                    "  ROOT c = f32[3,2] concatenate(a, b), dimensions={0}"))),
            (V{1, 2, 3, 4, 5, 6}));
}

TEST(DataOps, DynamicSliceClampsStartIndices) {
  const std::string prefix = "  a = s32[4,3] iota(), iota_dimension=0\n  b = s32[4,3] iota(), iota_dimension=1\n"
                             "  c10 = s32[] constant(10)\n  ten = s32[4,3] broadcast(c10), dimensions={}\n"
                             "  t = s32[4,3] multiply(a, ten)\n  d = s32[4,3] add(t, b)\n";
  auto ds = [&](const std::string& i, const std::string& j) {
    return values_of(run_hlo(entry(prefix + "  i = s32[] constant(" + i + ")\n  j = s32[] constant(" + j +
                                   ")\n  ROOT s = s32[2,2] dynamic-slice(d, i, j), dynamic_slice_sizes={2,2}")));
  };
  EXPECT_EQ(ds("1", "1"), (V{11, 12, 21, 22}));
  EXPECT_EQ(ds("3", "5"), (V{21, 22, 31, 32}));   // clamped to (2, 1)
  EXPECT_EQ(ds("-4", "-1"), (V{0, 1, 10, 11}));   // clamped to (0, 0)
}

TEST(DataOps, DynamicUpdateSliceClamps) {
  auto dus = [](const std::string& i) {
    return values_of(run_hlo(entry("  a = f32[5] constant({0, 0, 0, 0, 0})\n  u = f32[2] constant({7, 8})\n"
                                   "  i = s32[] constant(" + i + ")\n"
                                   "  ROOT r = f32[5] dynamic-update-slice(a, u, i)")));
  };
  EXPECT_EQ(dus("1"), (V{0, 7, 8, 0, 0}));
  EXPECT_EQ(dus("4"), (V{0, 0, 0, 7, 8}));
  EXPECT_EQ(dus("-2"), (V{7, 8, 0, 0, 0}));
}

const char* kAdd = "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n";

TEST(Reduce, AddMaxAndCustomComputation) {
  std::string text = std::string("HloModule t\n") + kAdd +
                     "ENTRY main {\n  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n  z = f32[] constant(0)\n"
                     "  ROOT r = f32[2] reduce(a, z), dimensions={1}, to_apply=add\n}\n";
  EXPECT_EQ(values_of(run_hlo(text)), (V{6, 15}));
  text = std::string("HloModule t\n") + kAdd +
         "ENTRY main {\n  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n  z = f32[] constant(10)\n"
         "  ROOT r = f32[3] reduce(a, z), dimensions={0}, to_apply=add\n}\n";
  EXPECT_EQ(values_of(run_hlo(text)), (V{15, 17, 19}));
  text = "HloModule t\nmx {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT m = s32[] maximum(x, y)\n}\n"
         "ENTRY main {\n  a = s32[2,3] constant({{1, 9, 3}, {-4, -5, -6}})\n  z = s32[] constant(-100)\n"
         "  ROOT r = s32[] reduce(a, z), dimensions={0,1}, to_apply=mx\n}\n";
  EXPECT_EQ(values_of(run_hlo(text)), (V{9}));
  // Not a single binary op: acc*2 + x, evaluated as a computation, in row-major order.
  text = "HloModule t\nf {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  two = s32[] constant(2)\n"
         "  d = s32[] multiply(x, two)\n  ROOT s = s32[] add(d, y)\n}\n"
         "ENTRY main {\n  a = s32[3] constant({1, 2, 3})\n  z = s32[] constant(0)\n"
         "  ROOT r = s32[] reduce(a, z), dimensions={0}, to_apply=f\n}\n";
  EXPECT_EQ(values_of(run_hlo(text)), (V{11}));  // ((0*2+1)*2+2)*2+3
}

TEST(Reduce, Bf16AccumulatesWithRoundingAfterEachStep) {
  std::string text =
      "HloModule t\nadd {\n  x = bf16[] parameter(0)\n  y = bf16[] parameter(1)\n  ROOT s = bf16[] add(x, y)\n}\n"
      "ENTRY main {\n  a = bf16[4] constant({256, 1, 1, 1})\n  z = bf16[] constant(0)\n"
      "  ROOT r = bf16[] reduce(a, z), dimensions={0}, to_apply=add\n}\n";
  EXPECT_EQ(values_of(run_hlo(text)), (V{256}));  // 256+1 rounds back to 256 every step
}

TEST(Reduce, Variadic) {
  // argmax-style: (value, index) pairs; keeps the larger value.
  std::string text =
      "HloModule t\nf {\n  a = f32[] parameter(0)\n  i = s32[] parameter(1)\n  b = f32[] parameter(2)\n"
      "  j = s32[] parameter(3)\n  ge = pred[] compare(a, b), direction=GE\n  v = f32[] select(ge, a, b)\n"
      "  k = s32[] select(ge, i, j)\n  ROOT t = (f32[], s32[]) tuple(v, k)\n}\n"
      "ENTRY main {\n  x = f32[5] constant({3, 9, 2, 9, 1})\n  idx = s32[5] iota(), iota_dimension=0\n"
      "  lo = f32[] constant(-1000)\n  zero = s32[] constant(-1)\n"
      "  ROOT r = (f32[], s32[]) reduce(x, idx, lo, zero), dimensions={0}, to_apply=f\n}\n";
  auto r = run_hlo(text);
  EXPECT_EQ(values_of(r, 0, 0), (V{9}));
  EXPECT_EQ(values_of(r, 0, 1), (V{1}));
}

TEST(Dot, MatmulBatchAndRounding) {
  auto r = run_hlo(entry("  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
                         "  b = f32[3,2] constant({{1, 0}, {0, 1}, {1, 1}})\n"
                         "  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  EXPECT_EQ(values_of(r), (V{4, 5, 10, 11}));
  // Contract lhs dim 0 with rhs dim 1: out = a^T b^T.
  r = run_hlo(entry("  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
                    "  b = f32[2,2] constant({{1, 2}, {3, 4}})\n"
                    "  ROOT d = f32[3,2] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}"));
  EXPECT_EQ(values_of(r), (V{9, 19, 12, 26, 15, 33}));
  // Batch: [2,1,2] x [2,2,1] -> [2,1,1]
  r = run_hlo(entry("  a = s32[2,1,2] constant({{{1, 2}}, {{3, 4}}})\n"
                    "  b = s32[2,2,1] constant({{{5}, {6}}, {{7}, {8}}})\n"
                    "  ROOT d = s32[2,1,1] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                    "lhs_contracting_dims={2}, rhs_contracting_dims={1}"));
  EXPECT_EQ(values_of(r), (V{17, 53}));
  // bf16: exact sum 257 rounds to 256 once at the end.
  r = run_hlo(entry("  a = bf16[1,2] constant({{256, 1}})\n  b = bf16[2,1] constant({{1}, {1}})\n"
                    "  ROOT d = bf16[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  EXPECT_EQ(values_of(r), (V{256}));
  // Trace: one gemm event with 2*m*n*k flops.
  r = run_hlo(entry("  a = f32[2,3] parameter(0)\n  b = f32[3,4] parameter(1)\n"
                    "  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  ASSERT_EQ(r.output.trace.events.size(), 1u);
  EXPECT_EQ(r.output.trace.events[0].flops, 2 * 2 * 4 * 3);
  EXPECT_EQ(r.output.trace.events[0].kind, trace::EventKind::kGemm);
  EXPECT_EQ(r.output.trace.events[0].bytes, (6 + 12 + 8) * 4);
}

TEST(CustomCall, CublasGemmIsADotWithWorkspace) {
  const char* text = R"(HloModule t
ENTRY main {
  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  b = f32[3,2] constant({{1, 0}, {0, 1}, {1, 1}})
  g = (f32[2,2], s8[1024]) custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"operation_queue_id":"0","gemm_backend_config":{"alpha_real":2,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]}}}
  ROOT o = f32[2,2] get-tuple-element(g), index=0
})";
  auto r = run_hlo(text);
  EXPECT_EQ(values_of(r), (V{8, 10, 20, 22}));
}

// domain marks a sharding boundary; its value is its operand's.
TEST(DataOps, DomainPassesItsOperandThrough) {
  EXPECT_EQ(values_of(run_hlo(entry("  a = f32[2] constant({1, 2})\n"
                                    "  ROOT d = f32[2] domain(a), domain={kind=\"sharding\", entry={maximal device=0}, "
                                    "exit={maximal device=1}}"))),
            (V{1, 2}));
}

// A tuple constant holds each leaf's values in order (hlo_parser_test's
// TupleConstant, and a nested one).
TEST(DataOps, TupleConstant) {
  auto ran = run_hlo(entry("  ROOT c = (f32[2,1], f32[2]) constant(( { {1}, {2} }, {2, 42} ))"));
  EXPECT_EQ(values_of(ran, 0, 0), (V{1, 2}));
  EXPECT_EQ(shape_of(ran, 0, 0), "f32[2,1]");
  EXPECT_EQ(values_of(ran, 0, 1), (V{2, 42}));
  auto nested = run_hlo(entry("  ROOT c = ((s32[], pred[2]), bf16[1]) constant(((7, {true, false}), {1.5}))"));
  EXPECT_EQ(values_of(nested, 0, 0), (V{7}));
  EXPECT_EQ(values_of(nested, 0, 1), (V{1, 0}));
  EXPECT_EQ(values_of(nested, 0, 2), (V{1.5}));
}

}  // namespace
}  // namespace sl::exec
