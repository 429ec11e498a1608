// How each fusion runs on the cuda backend (core/exec/codegen/fusion_plan.h),
// decided without a GPU: generated kernels with nested reduces computed a
// warp per row or hoisted,
// Triton GEMM fusions as cuBLASLt with prologue/epilogue kernels, op-by-op
// fallback, and the named error when neither exists. The JAX corpus pins
// how many fusions take each path.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>

#include "core/exec/codegen/fusion_plan.h"
#include "tests/codegen/fusion_test_modules.h"
#include "core/hlo/parser.h"

namespace sl::exec::codegen {
namespace {

namespace fs = std::filesystem;

struct Planned {
  std::shared_ptr<hlo::Module> module;
  FusionPlan plan;
};

// The plan of the entry's first fusion.
Planned plan_first(const std::string& text) {
  auto module = hlo::parse_program(text, "test.hlo");
  EXPECT_TRUE(module.is_ok()) << module.status().message();
  Planned p;
  if (!module.is_ok()) return p;
  p.module = std::make_shared<hlo::Module>(std::move(*module));
  for (const hlo::Instruction& inst : p.module->entry_computation().instructions) {
    if (inst.opcode == hlo::Opcode::kFusion) {
      p.plan = plan_fusion(*p.module, inst);
      break;
    }
  }
  return p;
}

TEST(FusionPlan, ReducesReadAtTheirRowAreComputedByTheWarpOfThatRow) {
  Planned p = plan_first(test_modules::softmax(64, 256));
  ASSERT_EQ(p.plan.path, FusionPath::kGenerated) << p.plan.why;
  EXPECT_EQ(p.plan.hoisted_reduces, 0);
  ASSERT_EQ(p.plan.steps.size(), 1u);
  EXPECT_TRUE(p.plan.temps.empty());
  const GeneratedKernel& k = p.plan.steps[0].kernel;
  EXPECT_EQ(k.loaded, 0);
  ASSERT_EQ(k.loops.size(), 1u);
  EXPECT_EQ(k.loops[0].loop, LoopKind::kRowElementwise);
  EXPECT_EQ(k.loops[0].threads, 64 * 32);  // a warp per row of 256
  // The max, then the sum reading it, each reduced across the warp once a
  // row, then the row's elements: three lane loops and no reduce loop per element.
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = k.source.find(what); at != std::string::npos; at = k.source.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("sl_shfl(w"), 2u) << k.source;
  EXPECT_EQ(count("for (IX it = 0; it < (IX)8; ++it)"), 3u) << k.source;
  EXPECT_EQ(count("for (IX r"), 0u) << k.source;
}

TEST(FusionPlan, TritonSoftmaxFusionsAreGenerated) {
  Planned p = plan_first(test_modules::softmax(64, 256, "kCustom", R"({"fusion_backend_config":{"kind":"__triton"}})"));
  EXPECT_EQ(p.plan.path, FusionPath::kGenerated) << p.plan.why;
  EXPECT_EQ(p.plan.steps.size(), 1u);
}

TEST(FusionPlan, ReducesReadAtAnotherIndexAreHoistedIntoKernelsOfTheirOwn) {
  Planned p = plan_first(test_modules::read_two_ways());
  ASSERT_EQ(p.plan.path, FusionPath::kGenerated) << p.plan.why;
  EXPECT_EQ(p.plan.hoisted_reduces, 1);
  ASSERT_EQ(p.plan.steps.size(), 2u);
  EXPECT_EQ(p.plan.steps[0].kernel.loops.at(0).loop, LoopKind::kRowReduce);
  EXPECT_EQ(p.plan.temps.at(0).elements, 64);
  const FusionStep& main = p.plan.steps[1];
  EXPECT_EQ(main.kernel.loaded, 1);
  EXPECT_EQ(main.kernel.loops.at(0).loop, LoopKind::kElementwise);
  EXPECT_EQ(main.args.at(1), (BufferRef{BufferRef::kTemp, 0}));
}

TEST(FusionPlan, OtherCustomFusionsAreNamedWhenNothingRunsThem) {
  Planned p = plan_first(R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
fused {
  p = f32[16] parameter(0)
  ROOT s = f32[16] sort(p), dimensions={0}, to_apply=cmp
}
ENTRY e {
  x = f32[16] parameter(0)
  ROOT f = f32[16] fusion(x), kind=kCustom, calls=fused, backend_config={"fusion_backend_config":{"kind":"__custom"}}
})");
  EXPECT_EQ(p.plan.path, FusionPath::kNone);
  EXPECT_NE(p.plan.why.find("kind kCustom __custom has no generated kernel"), std::string::npos) << p.plan.why;
  EXPECT_NE(p.plan.why.find("sort 's' has no per-op kernel"), std::string::npos) << p.plan.why;
}

TEST(FusionPlan, AFusionTheGeneratorRefusesRunsOpByOpWhenEveryOpHasAKernel) {
  Planned p = plan_first(R"(HloModule m
fused {
  p = u32[16] parameter(0)
  q = f32[16] parameter(1)
  b = f32[16] bitcast(p)
  a = f32[16] add(b, q)
  ROOT t = (f32[16], f32[16], f32[16]) tuple(a, q, a)
}
ENTRY e {
  x = u32[16] parameter(0)
  y = f32[16] parameter(1)
  ROOT f = (f32[16], f32[16], f32[16]) fusion(x, y), kind=kLoop, calls=fused
})");
  ASSERT_EQ(p.plan.path, FusionPath::kOpByOp) << p.plan.why;
  EXPECT_NE(p.plan.why.find("a bitcast changing the element type"), std::string::npos) << p.plan.why;
  EXPECT_EQ(p.plan.op_order, (std::vector<int>{2, 3}));  // b, a
  EXPECT_EQ(p.plan.slots[2], (BufferRef{BufferRef::kTemp, 0}));
  EXPECT_EQ(p.plan.slots[3], (BufferRef{BufferRef::kResult, 0}));
  ASSERT_EQ(p.plan.temps.size(), 1u);
  // Leaf 1 is a parameter and leaf 2 repeats leaf 0: both copied.
  ASSERT_EQ(p.plan.copies.size(), 2u);
  EXPECT_EQ(p.plan.copies[0].first, 1);
  EXPECT_EQ(p.plan.copies[0].second, (BufferRef{BufferRef::kOperand, 1}));
  EXPECT_EQ(p.plan.copies[1].first, 2);
  EXPECT_EQ(p.plan.copies[1].second, (BufferRef{BufferRef::kResult, 0}));
}

TEST(FusionPlan, AConstantOutputOfAnOpByOpRunIsCopiedFromItsTemporary) {
  Planned p = plan_first(R"(HloModule m
fused {
  p = u32[4] parameter(0)
  b = f32[4] bitcast(p)
  k = f32[4] constant({1, 2, 3, 4})
  ROOT t = (f32[4], f32[4]) tuple(b, k)
}
ENTRY e {
  x = u32[4] parameter(0)
  ROOT f = (f32[4], f32[4]) fusion(x), kind=kLoop, calls=fused
})");
  ASSERT_EQ(p.plan.path, FusionPath::kOpByOp) << p.plan.why;
  EXPECT_EQ(p.plan.slots[2], (BufferRef{BufferRef::kTemp, 0}));  // filled at setup
  ASSERT_EQ(p.plan.copies.size(), 1u);
  EXPECT_EQ(p.plan.copies[0].first, 1);
  EXPECT_EQ(p.plan.copies[0].second, (BufferRef{BufferRef::kTemp, 0}));
}

TEST(FusionPlan, GatherFusionsAreGenerated) {
  Planned p = plan_first(R"(HloModule m
fused {
  op = f32[32,8] parameter(0)
  ix = s32[4,1] parameter(1)
  ROOT g = f32[4,8] gather(op, ix), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
}
ENTRY e {
  x = f32[32,8] parameter(0)
  i = s32[4,1] parameter(1)
  ROOT f = f32[4,8] fusion(x, i), kind=kLoop, calls=fused
})");
  ASSERT_EQ(p.plan.path, FusionPath::kGenerated) << p.plan.why;
  const std::string& src = p.plan.steps.at(0).kernel.source;
  EXPECT_NE(src.find("sl_clamp_start("), std::string::npos) << src;  // starts clamped as XLA's gather does
}

std::string scatter_module(const std::string& combine) {
  return R"(HloModule m
comb {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] )" + combine + R"((a, b)
}
fused {
  op = f32[32,8] parameter(0)
  ix = s32[4,1] parameter(1)
  up = f32[4,8] parameter(2)
  ROOT s = f32[32,8] scatter(op, ix, up), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb
}
ENTRY e {
  x = f32[32,8] parameter(0)
  i = s32[4,1] parameter(1)
  u = f32[4,8] parameter(2)
  ROOT f = f32[32,8] fusion(x, i, u), kind=kInput, calls=fused
})";
}

TEST(FusionPlan, ScatterAddIsTheOperandCopyThenAtomicUpdates) {
  Planned p = plan_first(scatter_module("add"));
  ASSERT_EQ(p.plan.path, FusionPath::kGenerated) << p.plan.why;
  ASSERT_EQ(p.plan.steps.size(), 2u);
  EXPECT_EQ(p.plan.steps[0].skip_if_aliased, 0);  // in place: no copy
  EXPECT_EQ(p.plan.steps[1].kernel.loops.at(0).threads, 4 * 8);  // a thread per update element
  EXPECT_NE(p.plan.steps[1].kernel.source.find("atomicAdd(&o0["), std::string::npos) << p.plan.steps[1].kernel.source;
}

TEST(FusionPlan, ScatterWithOtherCombinersHasNoKernelAndSaysSo) {
  Planned p = plan_first(scatter_module("multiply"));
  EXPECT_EQ(p.plan.path, FusionPath::kNone);
  EXPECT_NE(p.plan.why.find("fusion 'f'"), std::string::npos) << p.plan.why;
  EXPECT_NE(p.plan.why.find("neither add nor assignment"), std::string::npos) << p.plan.why;
  EXPECT_NE(p.plan.why.find("op by op: scatter 's' has no per-op kernel"), std::string::npos) << p.plan.why;
}

std::string layout_module(const std::string& layout, const std::string& op) {
  return R"(HloModule m
fused {
  p = f32[64,32])" + layout + R"( parameter(0)
  ROOT t = )" + op + R"(
}
ENTRY e {
  x = f32[64,32])" + layout + R"( parameter(0)
  ROOT f = )" + op.substr(0, op.find(' ')) + R"( fusion(x), kind=kLoop, calls=fused
})";
}

TEST(FusionPlan, ParametersAreReadInTheirLayoutsMemoryOrder) {
  Planned row = plan_first(layout_module("{1,0}", "f32[64,32] exponential(p)"));
  Planned col = plan_first(layout_module("{0,1}", "f32[64,32] exponential(p)"));
  ASSERT_EQ(row.plan.path, FusionPath::kGenerated) << row.plan.why;
  ASSERT_EQ(col.plan.path, FusionPath::kGenerated) << col.plan.why;
  EXPECT_NE(row.plan.steps.at(0).kernel.source.find("p0[i]"), std::string::npos);
  // {0,1}: element (r, c) lies at c * 64 + r.
  const std::string& b = col.plan.steps.at(0).kernel.source;
  EXPECT_EQ(b.find("p0[i]"), std::string::npos) << b;
  EXPECT_NE(b.find("(i % (IX)32) * (IX)64"), std::string::npos) << b;
}

TEST(FusionPlan, ABitcastBetweenLayoutsReadsTheSameMemory) {
  // [64,32]{0,1} and [32,64]{1,0} are the same bytes: element i of the
  // result is word i of the buffer, through both mappings.
  Planned p = plan_first(layout_module("{0,1}", "f32[32,64]{1,0} bitcast(p)"));
  ASSERT_EQ(p.plan.path, FusionPath::kGenerated) << p.plan.why;
  EXPECT_NE(p.plan.steps.at(0).kernel.source.find("% (IX)64) * (IX)32"), std::string::npos);
}

constexpr const char* kGemmFusion = R"(HloModule m
gemm {
  p0 = f32[128,64] parameter(0)
  c = bf16[128,64] convert(p0)
  p1 = bf16[32,64] parameter(1)
  t = bf16[64,32] transpose(p1), dimensions={1,0}
  d = bf16[128,32] dot(c, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  k = bf16[] constant(2)
  b = bf16[128,32] broadcast(k), dimensions={}
  ROOT m = bf16[128,32] multiply(d, b)
}
ENTRY e {
  x = f32[128,64] parameter(0)
  w = bf16[32,64] parameter(1)
  ROOT f = bf16[128,32] fusion(x, w), kind=kCustom, calls=gemm, backend_config={"fusion_backend_config":{"kind":"__triton_gemm"}}
})";

std::string f32_gemm_fusion(const std::string& precision) {
  return R"(HloModule m
gemm {
  p0 = f32[64,32] parameter(0)
  p1 = f32[32,16] parameter(1)
  ROOT d = f32[64,16] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0})" + precision + R"(
}
ENTRY e {
  x = f32[64,32] parameter(0)
  w = f32[32,16] parameter(1)
  ROOT f = f32[64,16] fusion(x, w), kind=kCustom, calls=gemm, backend_config={"fusion_backend_config":{"kind":"__triton_gemm"}}
})";
}

TEST(FusionPlan, TritonF32GemmUsesTf32AsXlaDoesUnlessHighest) {
  Planned def = plan_first(f32_gemm_fusion(""));
  ASSERT_EQ(def.plan.path, FusionPath::kCublasGemm) << def.plan.why;
  ASSERT_TRUE(def.plan.steps.at(0).is_gemm);
  EXPECT_TRUE(def.plan.steps[0].gemm.tf32);
  Planned highest = plan_first(f32_gemm_fusion(", operand_precision={highest,highest}"));
  ASSERT_EQ(highest.plan.path, FusionPath::kCublasGemm) << highest.plan.why;
  EXPECT_FALSE(highest.plan.steps.at(0).gemm.tf32);
}

std::string scaled_gemm(const std::string& scale) {
  return R"(HloModule m
gemm {
  p0 = bf16[64,32] parameter(0)
  k = bf16[] constant()" + scale + R"()
  bk = bf16[64,32] broadcast(k), dimensions={}
  s = bf16[64,32] multiply(p0, bk)
  p1 = bf16[32,16] parameter(1)
  ROOT d = bf16[64,16] dot(s, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  x = bf16[64,32] parameter(0)
  w = bf16[32,16] parameter(1)
  ROOT f = bf16[64,16] fusion(x, w), kind=kCustom, calls=gemm, backend_config={"fusion_backend_config":{"kind":"__triton_gemm"}}
})";
}

// Attention's 1/sqrt(64) on an operand: cuBLASLt's alpha, no prologue kernel;
// a scale that is no power of two (not exact as alpha) keeps its prologue.
TEST(FusionPlan, APowerOfTwoScaleOfAGemmOperandIsAlpha) {
  Planned p = plan_first(scaled_gemm("0.125"));
  ASSERT_EQ(p.plan.path, FusionPath::kCublasGemm) << p.plan.why;
  ASSERT_EQ(p.plan.steps.size(), 1u);
  EXPECT_EQ(p.plan.steps[0].gemm.alpha, 0.125);
  EXPECT_EQ(p.plan.steps[0].gemm.lhs, (BufferRef{BufferRef::kOperand, 0}));
  Planned q = plan_first(scaled_gemm("0.3"));
  ASSERT_EQ(q.plan.path, FusionPath::kCublasGemm) << q.plan.why;
  ASSERT_EQ(q.plan.steps.size(), 2u);
  EXPECT_EQ(q.plan.steps[1].gemm.alpha, 1.0);
}

TEST(FusionPlan, ABatchDimensionThatIsNotLeadingIsAStridedBatch) {
  Planned p = plan_first(test_modules::kStridedBatchGemm);
  ASSERT_EQ(p.plan.path, FusionPath::kCublasGemm) << p.plan.why;
  ASSERT_EQ(p.plan.steps.size(), 1u);  // both operands read where they are
  const GemmCall& g = p.plan.steps[0].gemm;
  EXPECT_EQ(g.batch, 4);
  EXPECT_EQ(g.m, 32);
  EXPECT_EQ(g.n, 40);
  EXPECT_EQ(g.k, 48);
  EXPECT_FALSE(g.lhs_transposed);
  EXPECT_EQ(g.lhs_ld, 4 * 48);  // a row of m: past the other batches' k
  EXPECT_EQ(g.lhs_batch_stride, 48);
  EXPECT_FALSE(g.rhs_transposed);
  EXPECT_EQ(g.rhs_ld, 40);
  EXPECT_EQ(g.rhs_batch_stride, 48 * 40);

  Planned q = plan_first(test_modules::kStridedBatchGemmKLeading);
  ASSERT_EQ(q.plan.path, FusionPath::kCublasGemm) << q.plan.why;
  const GemmCall& h = q.plan.steps.at(0).gemm;
  EXPECT_TRUE(h.lhs_transposed);  // [k][m] in each batch
  EXPECT_EQ(h.lhs_ld, 4 * 32);
  EXPECT_EQ(h.lhs_batch_stride, 32);
  EXPECT_FALSE(h.rhs_transposed);  // [k][n]
  EXPECT_EQ(h.rhs_ld, 4 * 40);
  EXPECT_EQ(h.rhs_batch_stride, 40);
}

TEST(FusionPlan, ABatchDimensionThatIsMinorHasNoGemm) {
  Planned p = plan_first(R"(HloModule m
gemm {
  a = f32[32,48,4] parameter(0)
  b = f32[4,48,40] parameter(1)
  ROOT d = f32[4,32,40] dot(a, b), lhs_batch_dims={2}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
ENTRY e {
  x = f32[32,48,4] parameter(0)
  y = f32[4,48,40] parameter(1)
  ROOT f = f32[4,32,40] fusion(x, y), kind=kCustom, calls=gemm, backend_config={"fusion_backend_config":{"kind":"__triton_nested_gemm_fusion"}}
})");
  EXPECT_NE(p.plan.path, FusionPath::kCublasGemm);
  EXPECT_NE(p.plan.why.find("not leading"), std::string::npos) << p.plan.why;
}

TEST(FusionPlan, TritonGemmFusionIsACublasGemmWithPrologueAndEpilogueKernels) {
  Planned p = plan_first(kGemmFusion);
  ASSERT_EQ(p.plan.path, FusionPath::kCublasGemm) << p.plan.why;
  ASSERT_EQ(p.plan.steps.size(), 3u);
  // The convert of the lhs is a prologue kernel into a temporary ...
  EXPECT_FALSE(p.plan.steps[0].is_gemm);
  EXPECT_EQ(p.plan.steps[0].args.back(), (BufferRef{BufferRef::kTemp, 0}));
  EXPECT_EQ(p.plan.temps.at(0).type, hlo::PrimitiveType::kBF16);
  EXPECT_EQ(p.plan.temps.at(0).elements, 128 * 64);
  // ... the transposed parameter is read as it is, transposed by cuBLASLt ...
  ASSERT_TRUE(p.plan.steps[1].is_gemm);
  const GemmCall& g = p.plan.steps[1].gemm;
  EXPECT_EQ(g.lhs, (BufferRef{BufferRef::kTemp, 0}));
  EXPECT_EQ(g.rhs, (BufferRef{BufferRef::kOperand, 1}));
  EXPECT_FALSE(g.lhs_transposed);
  EXPECT_TRUE(g.rhs_transposed);
  EXPECT_EQ(g.m, 128);
  EXPECT_EQ(g.n, 32);
  EXPECT_EQ(g.k, 64);
  EXPECT_EQ(g.batch, 1);
  EXPECT_EQ(g.out, (BufferRef{BufferRef::kTemp, 1}));
  // ... and the multiply runs after it, reading the dot from its temporary.
  EXPECT_FALSE(p.plan.steps[2].is_gemm);
  EXPECT_EQ(p.plan.steps[2].kernel.loaded, 1);
  EXPECT_EQ(p.plan.steps[2].args.back(), (BufferRef{BufferRef::kResult, 0}));
}

constexpr const char* kBiasGemm = R"(HloModule m
gemm {
  x = T[8,16] parameter(0)
  w = T[16,32] parameter(1)
  d = T[8,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = T[32] parameter(2)
  bb = T[8,32] broadcast(b), dimensions={1}
  ROOT a = T[8,32] add(d, bb)
}
ENTRY e {
  x = T[8,16] parameter(0)
  w = T[16,32] parameter(1)
  b = T[32] parameter(2)
  ROOT f = T[8,32] fusion(x, w, b), kind=kCustom, calls=gemm, backend_config={"fusion_backend_config":{"kind":"__triton_nested_gemm_fusion"}}
})";

std::string typed(std::string text, const std::string& type) {
  for (size_t at = text.find("T["); at != std::string::npos; at = text.find("T[", at)) text.replace(at, 1, type);
  return text;
}

TEST(FusionPlan, AnF32BiasAddIsCublasLtsBiasEpilogueAndABf16OneAKernel) {
  Planned f32 = plan_first(typed(kBiasGemm, "f32"));
  ASSERT_EQ(f32.plan.path, FusionPath::kCublasGemm) << f32.plan.why;
  ASSERT_EQ(f32.plan.steps.size(), 1u);
  EXPECT_TRUE(f32.plan.steps[0].gemm.has_bias);
  EXPECT_EQ(f32.plan.steps[0].gemm.bias, (BufferRef{BufferRef::kOperand, 2}));
  EXPECT_EQ(f32.plan.steps[0].gemm.out, (BufferRef{BufferRef::kResult, 0}));
  EXPECT_TRUE(f32.plan.temps.empty());
  Planned bf16 = plan_first(typed(kBiasGemm, "bf16"));
  ASSERT_EQ(bf16.plan.path, FusionPath::kCublasGemm) << bf16.plan.why;
  ASSERT_EQ(bf16.plan.steps.size(), 2u);  // the GEMM, then the add in a kernel
  EXPECT_FALSE(bf16.plan.steps[0].gemm.has_bias);
}

TEST(FusionPlan, ADotWhoseLayoutTransposesItsOutputIsComputedTransposed) {
  Planned p = plan_first(R"(HloModule m
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
})");
  ASSERT_EQ(p.plan.path, FusionPath::kCublasGemm) << p.plan.why;
  ASSERT_EQ(p.plan.steps.size(), 1u);
  const GemmCall& g = p.plan.steps[0].gemm;
  // out[b] = (a[b] . b[b]^T)^T = b[b] . a[b]^T: [32, 8] x [8, 16].
  EXPECT_EQ(g.lhs, (BufferRef{BufferRef::kOperand, 1}));
  EXPECT_EQ(g.rhs, (BufferRef{BufferRef::kOperand, 0}));
  EXPECT_FALSE(g.lhs_transposed);
  EXPECT_TRUE(g.rhs_transposed);
  EXPECT_EQ(g.m, 32);
  EXPECT_EQ(g.n, 16);
  EXPECT_EQ(g.k, 8);
  EXPECT_EQ(g.batch, 4);
  EXPECT_EQ(g.out, (BufferRef{BufferRef::kResult, 0}));
}

TEST(FusionPlan, AGemmFusionCublasCannotRunFallsBackOpByOp) {
  Planned p = plan_first(R"(HloModule m
gemm {
  a = s32[16,8] parameter(0)
  b = s32[8,4] parameter(1)
  ROOT d = s32[16,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  x = s32[16,8] parameter(0)
  y = s32[8,4] parameter(1)
  ROOT f = s32[16,4] fusion(x, y), kind=kCustom, calls=gemm, backend_config={"fusion_backend_config":{"kind":"__triton_gemm"}}
})");
  ASSERT_EQ(p.plan.path, FusionPath::kOpByOp) << p.plan.why;
  EXPECT_NE(p.plan.why.find("are not a cuBLASLt GEMM"), std::string::npos) << p.plan.why;
  EXPECT_EQ(p.plan.op_order, (std::vector<int>{2}));
}

// Every fusion of the JAX after-optimizations dumps: how many take each
// path. Pinned, like tests/nvrtc's generation counts: a change in either
// direction updates these numbers and docs/codegen.md.
TEST(FusionPlan, CorpusFusionPaths) {
  std::map<std::string, int> paths;    // kind/path -> fusions
  std::map<std::string, int> reasons;  // none: the op-by-op reason's opcode
  for (const char* size : {"small", "large"}) {
    const fs::path dir = fs::path(SL_SOURCE_DIR) / "tests/corpus/jax" / size;
    ASSERT_TRUE(fs::exists(dir)) << dir;
    for (const auto& program : fs::directory_iterator(dir)) {
      for (const auto& file : fs::directory_iterator(program.path())) {
        if (file.path().filename().string().find("after_optimizations.txt") == std::string::npos) continue;
        auto module = hlo::parse_program_file(file.path().string());
        ASSERT_TRUE(module.is_ok()) << file.path() << ": " << module.status().message();
        for (const hlo::Computation& c : module->computations) {
          for (const hlo::Instruction& inst : c.instructions) {
            if (inst.opcode != hlo::Opcode::kFusion) continue;
            const FusionPlan plan = plan_fusion(*module, inst);
            const std::string kind = inst.fusion_kind == "kCustom" ? backend_kind(inst) : inst.fusion_kind;
            ++paths[kind + "/" + fusion_path_name(plan.path)];
            if (plan.path == FusionPath::kNone || plan.path == FusionPath::kOpByOp) {
              std::printf("%s %s/%s: %s\n", fusion_path_name(plan.path), size,
                          program.path().filename().c_str(), plan.why.substr(0, 160).c_str());
            }
            if (plan.path == FusionPath::kNone) {
              const size_t at = plan.why.find("op by op: ");
              const std::string rest = at == std::string::npos ? plan.why : plan.why.substr(at + 10);
              ++reasons[rest.substr(0, rest.find(' '))];
            }
          }
        }
      }
    }
  }
  for (const auto& [k, n] : paths) std::printf("%s: %d\n", k.c_str(), n);
  for (const auto& [k, n] : reasons) std::printf("none, first op without a kernel: %s x%d\n", k.c_str(), n);
  // The 8 "__triton_gemm" configs are on async-starts of cuBLAS custom-calls, not fusions.
  EXPECT_EQ(paths["__triton_nested_gemm_fusion/cublas_gemm"], 83);  // 2 of them strided batches
  EXPECT_EQ(paths["__triton/generated"], 28);
  EXPECT_EQ(paths["kLoop/generated"], 153);
  EXPECT_EQ(paths["kInput/generated"], 70);
}

}  // namespace
}  // namespace sl::exec::codegen
