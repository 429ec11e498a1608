// The cuda backend's fusion paths other than one generated kernel
// (core/exec/codegen/fusion_plan.h) against the cpu backend: reduces computed
// by the warp of their row, hoisted reduces, Triton GEMM fusions as cuBLASLt
// with prologue/epilogue kernels, op-by-op fallback (and its trace name),
// the named error when nothing runs a fusion, and `__cublas$lt$matmul` with
// alpha, beta and epilogues. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "tests/codegen/fusion_test_modules.h"
#include "tests/gpu/cuda_test_util.h"

namespace sl::exec {
namespace {

using gpu_test::expect_same;
using gpu_test::random_init;
using gpu_test::run_both;
namespace test_modules = codegen::test_modules;

class FusionPaths : public gpu_test::CudaTest {};

using gpu_test::counter;

TEST_F(FusionPaths, ReducesComputedByTheWarpOfTheirRowGiveTheCpuResults) {
  auto b = run_both(test_modules::softmax(64, 1000), random_init(5));  // rows of 1000: the last lanes do one element fewer
  expect_same(b, 1e-5);
  EXPECT_EQ(counter(b.cuda.trace, "codegen_hoisted_reduces"), 0);
  EXPECT_EQ(counter(b.cuda.trace, "codegen_kernels"), 1);
}

TEST_F(FusionPaths, NestedRowReducesAndHoistedColumnReducesGiveTheCpuResults) {
  auto b = run_both(test_modules::row_reduces(), random_init(6));
  expect_same(b, 1e-4);
  EXPECT_EQ(counter(b.cuda.trace, "codegen_hoisted_reduces"), 1);  // the column max
  EXPECT_EQ(counter(b.cuda.trace, "codegen_kernels"), 2);
}

TEST_F(FusionPaths, TiledTransposesAreExact) {
  auto b = run_both(test_modules::kTransposes, random_init(7));
  expect_same(b);
  EXPECT_EQ(counter(b.cuda.trace, "codegen_kernels"), 1);
}

TEST_F(FusionPaths, TritonGemmFusionWithPrologueAndEpilogue) {
  auto b = run_both(R"(HloModule m
gemm {
  p0 = f32[128,64] parameter(0)
  c = bf16[128,64] convert(p0)
  p1 = bf16[32,64] parameter(1)
  t = bf16[64,32] transpose(p1), dimensions={1,0}
  d = bf16[128,32] dot(c, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  k = bf16[] constant(2)
  bk = bf16[128,32] broadcast(k), dimensions={}
  ROOT m = bf16[128,32] multiply(d, bk)
}
ENTRY e {
  x = f32[128,64] parameter(0)
  w = bf16[32,64] parameter(1)
  ROOT f = bf16[128,32] fusion(x, w), kind=kCustom, calls=gemm, backend_config={"fusion_backend_config":{"kind":"__triton_gemm"}}
})", random_init(6));
  expect_same(b, 2e-2);
  EXPECT_EQ(counter(b.cuda.trace, "codegen_fusions_gemm"), 1);
  EXPECT_EQ(counter(b.cuda.trace, "codegen_kernels"), 2);  // the convert, the multiply
}

TEST_F(FusionPaths, StridedBatchGemmsGiveTheCpuResults) {
  for (const char* text : {test_modules::kStridedBatchGemm, test_modules::kStridedBatchGemmKLeading}) {
    auto b = run_both(text, random_init(8));
    expect_same(b, 1e-5);
    EXPECT_EQ(counter(b.cuda.trace, "codegen_fusions_gemm"), 1);
    EXPECT_EQ(counter(b.cuda.trace, "codegen_kernels"), 0);  // no prologue: read in place
  }
}

TEST_F(FusionPaths, TritonGemmFusionWithATransposingOutputLayout) {
  auto b = run_both(R"(HloModule m
gemm {
  a = bf16[4,16,8] parameter(0)
  b = bf16[4,32,8] parameter(1)
  d = bf16[4,16,32]{1,2,0} dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  ROOT r = bf16[4,32,16]{2,1,0} bitcast(d)
}
ENTRY e {
  x = bf16[4,16,8] parameter(0)
  y = bf16[4,32,8] parameter(1)
  ROOT f = bf16[4,32,16] fusion(x, y), kind=kCustom, calls=gemm, backend_config={"fusion_backend_config":{"kind":"__triton_nested_gemm_fusion"}}
})", random_init(7));
  expect_same(b, 2e-2);
  EXPECT_EQ(counter(b.cuda.trace, "codegen_fusions_gemm"), 1);
  EXPECT_EQ(counter(b.cuda.trace, "codegen_kernels"), 0);
}

TEST_F(FusionPaths, TritonGemmFusionWithABiasEpilogue) {
  for (const char* type : {"f32", "bf16"}) {
    SCOPED_TRACE(type);
    std::string text = R"(HloModule m
gemm {
  x = T[64,48] parameter(0)
  w = T[48,32] parameter(1)
  d = T[64,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = T[32] parameter(2)
  bb = T[64,32] broadcast(b), dimensions={1}
  ROOT a = T[64,32] add(d, bb)
}
ENTRY e {
  x = T[64,48] parameter(0)
  w = T[48,32] parameter(1)
  b = T[32] parameter(2)
  ROOT f = T[64,32] fusion(x, w, b), kind=kCustom, calls=gemm, backend_config={"fusion_backend_config":{"kind":"__triton_nested_gemm_fusion"}}
})";
    for (size_t at = text.find("T["); at != std::string::npos; at = text.find("T[", at)) text.replace(at, 1, type);
    auto b = run_both(text, random_init(12));
    expect_same(b, std::string(type) == "f32" ? 1e-5 : 2e-2);
  }
}

TEST_F(FusionPaths, OpByOpFallbackGivesTheCpuResultsAndSaysSo) {
  auto b = run_both(R"(HloModule m
fused {
  p = u32[256] parameter(0)
  q = f32[256] parameter(1)
  b = f32[256] bitcast(p)
  k = f32[] constant(0.5)
  bk = f32[256] broadcast(k), dimensions={}
  m = f32[256] multiply(q, bk)
  a = f32[256] add(b, m)
  ROOT t = (f32[256], f32[256], f32[256]) tuple(a, q, a)
}
ENTRY e {
  x = u32[256] parameter(0)
  y = f32[256] parameter(1)
  ROOT f = (f32[256], f32[256], f32[256]) fusion(x, y), kind=kLoop, calls=fused
})");
  expect_same(b, 0.0);
  EXPECT_EQ(counter(b.cuda.trace, "codegen_fallback_fusions"), 1);
  bool named = false;
  for (const trace::Event& e : b.cuda.trace.events) named |= b.cuda.trace.instruction_of(e) == "f [op-by-op]";
  EXPECT_TRUE(named || b.cuda.trace.events.empty()) << "no event names the op-by-op fusion";
}

TEST_F(FusionPaths, AFusionNothingRunsFailsNamingTheInstruction) {
  // A sort: neither the generator nor the per-op kernels run one (a gather,
  // used here before, has been generated since).
  auto b = run_both(R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
fused {
  p = f32[32] parameter(0)
  ROOT s = f32[32] sort(p), dimensions={0}, to_apply=cmp
}
ENTRY e {
  x = f32[32] parameter(0)
  ROOT f = f32[32] fusion(x), kind=kLoop, calls=fused
})");
  ASSERT_FALSE(b.status.is_ok());
  EXPECT_NE(b.status.message().find("instruction 'f'"), std::string::npos) << b.status.message();
  EXPECT_NE(b.status.message().find("sort 's' has no per-op kernel"), std::string::npos) << b.status.message();
}

TEST_F(FusionPaths, CublasLtMatmulHonoursAlphaBiasAndTransposition) {
  auto b = run_both(R"(HloModule m
ENTRY e {
  x = f32[64,32] parameter(0)
  w = f32[48,32] parameter(1)
  bias = f32[48] parameter(2)
  g = (f32[64,48], s8[33554432]) custom-call(x, w, bias), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_imag":0,"alpha_real":0.25,"beta":0,"dot_dimension_numbers":{"lhs_batch_dimensions":[],"lhs_contracting_dimensions":["1"],"rhs_batch_dimensions":[],"rhs_contracting_dimensions":["1"]},"epilogue":"BIAS"}}
  ROOT r = f32[64,48] get-tuple-element(g), index=0
})", random_init(8));
  expect_same(b, 1e-5);
}

TEST_F(FusionPaths, CublasLtMatmulHonoursBetaAndRelu) {
  auto b = run_both(R"(HloModule m
ENTRY e {
  x = bf16[64,32] parameter(0)
  w = bf16[32,48] parameter(1)
  c = bf16[64,48] parameter(2)
  g = (bf16[64,48], s8[33554432]) custom-call(x, w, c), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_imag":0,"alpha_real":1,"beta":0.5,"dot_dimension_numbers":{"lhs_batch_dimensions":[],"lhs_contracting_dimensions":["1"],"rhs_batch_dimensions":[],"rhs_contracting_dimensions":["0"]},"epilogue":"RELU"}}
  ROOT r = bf16[64,48] get-tuple-element(g), index=0
})", random_init(9));
  expect_same(b, 2e-2);
}

// A cuBLAS result laid out {0,1} is C^T in memory; the fusion reading it
// through a bitcast to row-major reads that memory as it is.
TEST_F(FusionPaths, ColumnMajorGemmResultThroughABitcast) {
  auto b = run_both(R"(HloModule m
fused {
  p = f32[64,48]{0,1} parameter(0)
  t = f32[48,64]{1,0} bitcast(p)
  ROOT n = f32[48,64] negate(t)
}
ENTRY e {
  x = f32[64,32] parameter(0)
  w = f32[32,48] parameter(1)
  g = (f32[64,48]{0,1}, s8[33554432]) custom-call(x, w), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_imag":0,"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_batch_dimensions":[],"lhs_contracting_dimensions":["1"],"rhs_batch_dimensions":[],"rhs_contracting_dimensions":["0"]},"epilogue":"DEFAULT"}}
  c = f32[64,48]{0,1} get-tuple-element(g), index=0
  ROOT f = f32[48,64] fusion(c), kind=kLoop, calls=fused
})", random_init(13));
  expect_same(b, 1e-5);
}

// An elementwise output laid out {0,1}, large enough for the unrolled loop:
// threads walk its memory order (q), each element still gets its own value;
// the second fusion reads that memory through a bitcast as it is.
TEST_F(FusionPaths, ColumnMajorElementwiseOutputInMemoryOrder) {
  auto b = run_both(R"(HloModule m
scale {
  p = f32[1024,2048] parameter(0)
  s = f32[1024] parameter(1)
  bs = f32[1024,2048]{0,1} broadcast(s), dimensions={0}
  ROOT m = f32[1024,2048]{0,1} multiply(p, bs)
}
fused {
  q = f32[1024,2048]{0,1} parameter(0)
  t = f32[2048,1024]{1,0} bitcast(q)
  ROOT n = f32[2048,1024] negate(t)
}
ENTRY e {
  x = f32[1024,2048] parameter(0)
  y = f32[1024] parameter(1)
  c = f32[1024,2048]{0,1} fusion(x, y), kind=kLoop, calls=scale
  ROOT f = f32[2048,1024] fusion(c), kind=kLoop, calls=fused
})", random_init(17));
  expect_same(b, 0.0);
}

// A power-of-two scale of a GEMM operand runs as cuBLASLt's alpha.
TEST_F(FusionPaths, TritonGemmFusionScaleAsAlpha) {
  auto b = run_both(R"(HloModule m
gemm {
  p0 = bf16[128,64] parameter(0)
  k = bf16[] constant(0.125)
  bk = bf16[128,64] broadcast(k), dimensions={}
  s = bf16[128,64] multiply(p0, bk)
  p1 = bf16[64,32] parameter(1)
  ROOT d = bf16[128,32] dot(s, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  x = bf16[128,64] parameter(0)
  w = bf16[64,32] parameter(1)
  ROOT f = bf16[128,32] fusion(x, w), kind=kCustom, calls=gemm, backend_config={"fusion_backend_config":{"kind":"__triton_gemm"}}
})", random_init(19));
  expect_same(b, 2e-2);
  EXPECT_EQ(counter(b.cuda.trace, "codegen_kernels"), 0) << "the scale ran as a prologue kernel";
}

TEST_F(FusionPaths, GatherIsExact) {
  auto b = run_both(R"(HloModule m
fused {
  op = f32[100,16] parameter(0)
  ix = s32[8,5] parameter(1)
  g = f32[8,5,16] gather(op, ix), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,16}
  ROOT e = f32[8,5,16] exponential(g)
}
ENTRY e {
  x = f32[100,16] parameter(0)
  i = s32[8,5] parameter(1)
  ROOT f = f32[8,5,16] fusion(x, i), kind=kLoop, calls=fused
})");  // ramp indices: many out of range, clamped
  expect_same(b, 1e-6);
}

std::string scatter_add() {
  return R"(HloModule m
add {
  a = T[] parameter(0)
  b = T[] parameter(1)
  ROOT s = T[] add(a, b)
}
fused {
  op = T[64,32] parameter(0)
  ix = s32[40,1] parameter(1)
  k = s32[] constant(64)
  bk = s32[40,1] broadcast(k), dimensions={}
  r = s32[40,1] remainder(ix, bk)
  up = T[40,32] parameter(2)
  ROOT s = T[64,32] scatter(op, r, up), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
ENTRY e {
  x = T[64,32] parameter(0)
  i = s32[40,1] parameter(1)
  u = T[40,32] parameter(2)
  ROOT f = T[64,32] fusion(x, i, u), kind=kInput, calls=fused
})";
}

std::string with_type(std::string text, const std::string& type) {
  for (size_t at = text.find("T["); at != std::string::npos; at = text.find("T[", at + type.size())) {
    text.replace(at, 1, type);
  }
  return text;
}

TEST_F(FusionPaths, ScatterAddWithCollidingIndices) {
  // Random indices modulo 64 for 40 updates: rows hit twice or more, and
  // negative ones (windows that do not fit) skipped.
  auto f32 = run_both(with_type(scatter_add(), "f32"), random_init(10));
  expect_same(f32, 1e-5);
  auto bf16 = run_both(with_type(scatter_add(), "bf16"), random_init(11));
  expect_same(bf16, 2e-2);
}

// XLA's precision for f32 GEMMs (core/sched/dot_precision.h): the
// DEFAULT-precision custom-call runs in TF32 (close to the cpu result, not
// equal), the HIGHEST one in full f32.
std::string f32_cublas(const char* precision) {
  return std::string(R"(HloModule m
ENTRY e {
  x = f32[128,512] parameter(0)
  w = f32[512,64] parameter(1)
  g = (f32[128,64], s8[33554432]) custom-call(x, w), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_imag":0,"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_batch_dimensions":[],"lhs_contracting_dimensions":["1"],"rhs_batch_dimensions":[],"rhs_contracting_dimensions":["0"]},"precision_config":{"algorithm":"ALG_UNSET","operand_precision":[")") +
         precision + R"("]},"epilogue":"DEFAULT"}}
  ROOT r = f32[128,64] get-tuple-element(g), index=0
})";
}

double max_abs_difference(const gpu_test::Both& b) {
  double worst = 0.0;
  const auto& c = b.cpu.results.at(0).outputs.at(0).values;
  const auto& g = b.cuda.results.at(0).outputs.at(0).values;
  for (size_t i = 0; i < c.size() && i < g.size(); ++i) worst = std::max(worst, std::fabs(c[i] - g[i]));
  return worst;
}

TEST_F(FusionPaths, F32GemmsUseTf32WhereXlaDoes) {
  auto def = run_both(f32_cublas("DEFAULT\",\"DEFAULT"), random_init(21), /*exact_f32=*/false);
  expect_same(def, 2e-2);
  EXPECT_GT(max_abs_difference(def), 0.0) << "the DEFAULT-precision GEMM ran in full f32";
  auto highest = run_both(f32_cublas("HIGHEST\",\"HIGHEST"), random_init(21), /*exact_f32=*/false);
  expect_same(highest, 1e-5);
}

}  // namespace
}  // namespace sl::exec
