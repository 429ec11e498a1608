// Kernel content (sim/kernel_content.h) and its cost, one rule a test, on
// modules written as XLA's GPU compiler prints them.

#include "sim/kernel_content.h"

#include <gtest/gtest.h>

#include <string>

#include "core/hlo/parser.h"
#include "core/sched/lowering.h"
#include "sim/cost_model.h"
#include "sim/device_model.h"
#include "sim/engine.h"
#include "sim/sim_backend.h"

namespace sl::sim {
namespace {

struct Parsed {
  hlo::Module module;
  const hlo::Computation& entry() const { return module.entry_computation(); }
  const hlo::Instruction& named(const std::string& name) const {
    const hlo::Computation& c = entry();
    return c.instructions.at(static_cast<size_t>(c.find(name)));
  }
  KernelWork work(const std::string& name) const { return instruction_work(&module, entry(), named(name)); }
};

Parsed parse(const std::string& text) {
  Result<hlo::Module> m = hlo::parse_program(text, "content.hlo");
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return Parsed{m.is_ok() ? std::move(*m) : hlo::Module{}};
}

DeviceModel h200() {
  Result<DeviceModel> m = load_device_model("h200");
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return *m;
}

constexpr const char* kTritonGemm = R"(HloModule m, is_scheduled=true
%gemm_fusion_dot.11_computation (p0: bf16[8192,2048], p1: bf16[2048,2048]) -> bf16[8192,2048] {
  %p0 = bf16[8192,2048]{1,0} parameter(0)
  %p1 = bf16[2048,2048]{1,0} parameter(1)
  ROOT %dot.1 = bf16[8192,2048]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY %main (x: bf16[8192,2048], w: bf16[2048,2048]) -> bf16[8192,2048] {
  %x = bf16[8192,2048]{1,0} parameter(0)
  %w = bf16[2048,2048]{1,0} parameter(1)
  ROOT %gemm_fusion_dot.11 = bf16[8192,2048]{1,0} fusion(%x, %w), kind=kCustom, calls=%gemm_fusion_dot.11_computation, backend_config={"fusion_backend_config":{"kind":"__triton_gemm"}}
}
)";

TEST(KernelContent, TritonGemmFusionIsAGemmWithItsDotsDims) {
  Parsed p = parse(kTritonGemm);
  KernelWork w = p.work("gemm_fusion_dot.11");
  ASSERT_EQ(w.work_class, WorkClass::kGemm);
  EXPECT_EQ(w.gemm.m, 8192);
  EXPECT_EQ(w.gemm.n, 2048);
  EXPECT_EQ(w.gemm.k, 2048);
  EXPECT_EQ(w.gemm.batch, 1);
  EXPECT_EQ(w.gemm.type, hlo::PrimitiveType::kBF16);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 8192 * 2048 * 2048);
  const double operands = (8192.0 * 2048 + 2048.0 * 2048) * 2;
  EXPECT_DOUBLE_EQ(w.bytes_read, operands);
  EXPECT_DOUBLE_EQ(w.bytes_written, 8192.0 * 2048 * 2);

  // 68.7 GFLOP at the 989 TFLOP/s bf16 peak takes 69.5 us; the table's
  // efficiency makes it longer, never shorter.
  DeviceModel m = h200();
  sched::Thunk t;
  t.instruction = &p.named("gemm_fusion_dot.11");
  t.computation = &p.entry();
  KernelCost c = content_cost(m, t, w, false);
  EXPECT_GT(c.work_ns, w.flops / (m.peak_bf16_tflops * 1e12) * 1e9);
}

constexpr const char* kNestedGemm = R"(HloModule m, is_scheduled=true
%lhs_fusion (a: bf16[128,64,1024]) -> bf16[128,1024,64] {
  %a = bf16[128,64,1024]{2,1,0} parameter(0)
  ROOT %t = bf16[128,1024,64]{2,1,0} transpose(%a), dimensions={0,2,1}
}
%gemm_comp (p0: bf16[128,64,1024], p1: bf16[128,64,1024]) -> bf16[128,1024,1024] {
  %p0 = bf16[128,64,1024]{2,1,0} parameter(0)
  %p1 = bf16[128,64,1024]{2,1,0} parameter(1)
  %lhs = bf16[128,1024,64]{2,1,0} fusion(%p0), kind=kCustom, calls=%lhs_fusion, backend_config={"fusion_backend_config":{"kind":"__triton_nested_gemm_fusion"}}
  ROOT %d = bf16[128,1024,1024]{2,1,0} dot(%lhs, %p1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
ENTRY %main (x: bf16[128,64,1024], y: bf16[128,64,1024]) -> bf16[128,1024,1024] {
  %x = bf16[128,64,1024]{2,1,0} parameter(0)
  %y = bf16[128,64,1024]{2,1,0} parameter(1)
  ROOT %g = bf16[128,1024,1024]{2,1,0} fusion(%x, %y), kind=kCustom, calls=%gemm_comp, backend_config={"fusion_backend_config":{"kind":"__triton_gemm"}}
}
)";

TEST(KernelContent, DotInsideNestedFusionsIsFound) {
  Parsed p = parse(kNestedGemm);
  KernelWork w = p.work("g");
  ASSERT_EQ(w.work_class, WorkClass::kGemm);
  EXPECT_EQ(w.gemm.batch, 128);
  EXPECT_EQ(w.gemm.m, 1024);
  EXPECT_EQ(w.gemm.n, 1024);
  EXPECT_EQ(w.gemm.k, 64);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 128 * 1024 * 1024 * 64);
}

constexpr const char* kLoop = R"(HloModule m, is_scheduled=true
%fused (p0: f32[1024], p1: f32[1024,1024]) -> f32[1024,1024] {
  %p0 = f32[1024]{0} parameter(0)
  %p1 = f32[1024,1024]{1,0} parameter(1)
  %b = f32[1024,1024]{1,0} broadcast(%p0), dimensions={1}
  %s = f32[1024,1024]{1,0} add(%b, %p1)
  ROOT %m = f32[1024,1024]{1,0} multiply(%s, %s)
}
%sliced (p0: f32[1024,1024]) -> f32[1,1024] {
  %p0 = f32[1024,1024]{1,0} parameter(0)
  %b = f32[1024,1024]{1,0} bitcast(%p0)
  ROOT %s = f32[1,1024]{1,0} slice(%b), slice={[0:1], [0:1024]}
}
ENTRY %main (v: f32[1024], x: f32[1024,1024]) -> (f32[1024,1024], f32[1,1024]) {
  %v = f32[1024]{0} parameter(0)
  %x = f32[1024,1024]{1,0} parameter(1)
  %loop = f32[1024,1024]{1,0} fusion(%v, %x), kind=kLoop, calls=%fused
  %slice = f32[1,1024]{1,0} fusion(%x), kind=kLoop, calls=%sliced
  ROOT %t = (f32[1024,1024]{1,0}, f32[1,1024]{1,0}) tuple(%loop, %slice)
}
)";

TEST(KernelContent, BroadcastOperandIsReadOnce) {
  Parsed p = parse(kLoop);
  KernelWork w = p.work("loop");
  EXPECT_EQ(w.work_class, WorkClass::kFusion);
  EXPECT_DOUBLE_EQ(w.bytes_read, 1024.0 * 4 + 1024.0 * 1024 * 4);
  EXPECT_DOUBLE_EQ(w.bytes_written, 1024.0 * 1024 * 4);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 1024 * 1024);  // add and multiply; broadcast is free
  EXPECT_DOUBLE_EQ(w.transcendentals, 0);
}

TEST(KernelContent, ParameterUsedThroughASliceReadsTheSlice) {
  Parsed p = parse(kLoop);
  KernelWork w = p.work("slice");
  EXPECT_DOUBLE_EQ(w.bytes_read, 1024.0 * 4);
  EXPECT_DOUBLE_EQ(w.bytes_written, 1024.0 * 4);
}

constexpr const char* kUpdate = R"(HloModule m, is_scheduled=true
%fused_dus (buf: f32[128,1024], i: s32[], u: f32[1,1024]) -> f32[128,1024] {
  %buf = f32[128,1024]{1,0} parameter(0)
  %i = s32[] parameter(1)
  %u = f32[1,1024]{1,0} parameter(2)
  %z = s32[] constant(0)
  ROOT %d = f32[128,1024]{1,0} dynamic-update-slice(%buf, %u, %i, %z)
}
ENTRY %main (buf: f32[128,1024], i: s32[], u: f32[1,1024]) -> f32[128,1024] {
  %buf = f32[128,1024]{1,0} parameter(0)
  %i = s32[] parameter(1)
  %u = f32[1,1024]{1,0} parameter(2)
  ROOT %f = f32[128,1024]{1,0} fusion(%buf, %i, %u), kind=kLoop, calls=%fused_dus
}
)";

TEST(KernelContent, DynamicUpdateSliceInPlaceMovesOnlyTheUpdate) {
  Parsed p = parse(kUpdate);
  KernelWork w = p.work("f");
  EXPECT_DOUBLE_EQ(w.bytes_read, 4.0 + 1024 * 4);
  EXPECT_DOUBLE_EQ(w.bytes_written, 1024.0 * 4);
}

constexpr const char* kNorm = R"(HloModule m, is_scheduled=true
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
%fused_norm (p0: f32[1024,4096]) -> f32[1024] {
  %p0 = f32[1024,4096]{1,0} parameter(0)
  %e = f32[1024,4096]{1,0} exponential(%p0)
  %t = f32[1024,4096]{1,0} tanh(%e)
  %z = f32[] constant(0)
  ROOT %r = f32[1024]{0} reduce(%t, %z), dimensions={1}, to_apply=%add
}
ENTRY %main (x: f32[1024,4096]) -> f32[1024] {
  %x = f32[1024,4096]{1,0} parameter(0)
  ROOT %n = f32[1024]{0} fusion(%x), kind=kInput, calls=%fused_norm
}
)";

TEST(KernelContent, ReductionCountsTranscendentalsAndReducerOps) {
  Parsed p = parse(kNorm);
  KernelWork w = p.work("n");
  EXPECT_EQ(w.work_class, WorkClass::kFusion);
  const double n = 1024.0 * 4096;
  EXPECT_DOUBLE_EQ(w.transcendentals, 2 * n);
  EXPECT_DOUBLE_EQ(w.flops, n);  // the reducer's add per element
  EXPECT_DOUBLE_EQ(w.bytes_read, n * 4);
  EXPECT_DOUBLE_EQ(w.bytes_written, 1024.0 * 4);

  // With HBM out of the way, bound by the SFU: 8.4 M transcendentals at 16
  // a clock on 132 SMs.
  DeviceModel m = h200();
  m.transcendental_tops = 0;
  m.hbm_bandwidth_gbps = 1e6;
  sched::Thunk t;
  KernelCost c = content_cost(m, t, w, false);
  const double sfu_ns = 2 * n / (132.0 * 16 * m.clock_mhz * 1e6) * 1e9;
  EXPECT_NEAR(c.work_ns, sfu_ns + m.kernel_launch_us * 1e3, 1e-6);
}

constexpr const char* kDataOps = R"(HloModule m, is_scheduled=true
%less (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %l = pred[] compare(%a, %b), direction=LT
}
ENTRY %main (x: f32[8,1024], table: f32[50000,256], idx: s32[64,1], img: f32[8,32,32,16], k: f32[3,3,16,64]) -> (f32[8,1024], f32[64,256], f32[8,32,32,64], f32[8,1024]) {
  %x = f32[8,1024]{1,0} parameter(0)
  %table = f32[50000,256]{1,0} parameter(1)
  %idx = s32[64,1]{1,0} parameter(2)
  %img = f32[8,32,32,16]{3,2,1,0} parameter(3)
  %k = f32[3,3,16,64]{3,2,1,0} parameter(4)
  %sorted = f32[8,1024]{1,0} sort(%x), dimensions={1}, to_apply=%less
  %g = f32[64,256]{1,0} gather(%table, %idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,256}
  %conv = f32[8,32,32,64]{3,2,1,0} convolution(%img, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  %e = f32[8,1024]{1,0} exponential(%x)
  ROOT %t = (f32[8,1024]{1,0}, f32[64,256]{1,0}, f32[8,32,32,64]{3,2,1,0}, f32[8,1024]{1,0}) tuple(%sorted, %g, %conv, %e)
}
)";

TEST(KernelContent, SortIsNLogN) {
  Parsed p = parse(kDataOps);
  KernelWork w = p.work("sorted");
  EXPECT_EQ(w.work_class, WorkClass::kSort);
  EXPECT_DOUBLE_EQ(w.flops, 8.0 * 1024 * 10);  // log2(1024) compares per element
  EXPECT_DOUBLE_EQ(w.bytes(), 2 * 8.0 * 1024 * 4);
}

TEST(KernelContent, GatherReadsTheRowsItGathers) {
  Parsed p = parse(kDataOps);
  KernelWork w = p.work("g");
  EXPECT_EQ(w.work_class, WorkClass::kGather);
  EXPECT_DOUBLE_EQ(w.bytes_read, 64.0 * 256 * 4 + 64 * 4);  // not the 51 MB table
  EXPECT_DOUBLE_EQ(w.bytes_written, 64.0 * 256 * 4);
}

TEST(KernelContent, ConvolutionIsAnImplicitGemm) {
  Parsed p = parse(kDataOps);
  KernelWork w = p.work("conv");
  EXPECT_EQ(w.work_class, WorkClass::kConvolution);
  EXPECT_EQ(w.gemm.m, 8 * 32 * 32);
  EXPECT_EQ(w.gemm.n, 64);
  EXPECT_EQ(w.gemm.k, 3 * 3 * 16);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 8 * 32 * 32 * 64 * 3 * 3 * 16);
}

TEST(KernelContent, TranscendentalElementwiseOutsideAFusion) {
  Parsed p = parse(kDataOps);
  KernelWork w = p.work("e");
  EXPECT_EQ(w.work_class, WorkClass::kElementwise);
  EXPECT_DOUBLE_EQ(w.transcendentals, 8.0 * 1024);
  EXPECT_DOUBLE_EQ(w.bytes(), 2 * 8.0 * 1024 * 4);
}

constexpr const char* kCustomCalls = R"(HloModule m, is_scheduled=true
ENTRY %main (q: bf16[8,1024,64], w: f32[256,256]) -> (bf16[8,1024,64], f32[256,256]) {
  %q = bf16[8,1024,64]{2,1,0} parameter(0)
  %w = f32[256,256]{1,0} parameter(1)
  %attn = bf16[8,1024,64]{2,1,0} custom-call(%q, %q, %q), custom_call_target="__cudnn$fmhaSoftmax"
  %mm = (f32[256,256]{1,0}, s8[1024]{0}) custom-call(%w, %w), custom_call_target="__cublas$gemm"
  %mm0 = f32[256,256]{1,0} get-tuple-element(%mm), index=0
  ROOT %t = (bf16[8,1024,64]{2,1,0}, f32[256,256]{1,0}) tuple(%attn, %mm0)
}
)";

TEST(KernelContent, OpaqueCustomCallCostsItsBytesAndCuBlasIsLeftToTheGemmPath) {
  Parsed p = parse(kCustomCalls);
  KernelWork w = p.work("attn");
  EXPECT_EQ(w.work_class, WorkClass::kCustomCall);
  EXPECT_DOUBLE_EQ(w.bytes(), 4 * 8.0 * 1024 * 64 * 2);
  EXPECT_DOUBLE_EQ(w.flops, 0);
  EXPECT_EQ(p.work("mm").work_class, WorkClass::kThunk);
}

TEST(KernelContent, WithoutTheModuleAFusionKeepsItsThunkNumbers) {
  Parsed p = parse(kTritonGemm);
  sched::Thunk t;
  t.instruction = &p.named("gemm_fusion_dot.11");
  t.computation = &p.entry();
  t.flops = 7;
  t.bytes_accessed = 11;
  KernelWork w = kernel_work(nullptr, t);
  EXPECT_EQ(w.work_class, WorkClass::kThunk);
  EXPECT_DOUBLE_EQ(w.flops, 7);
  EXPECT_DOUBLE_EQ(w.bytes(), 11);
  EXPECT_EQ(kernel_work(&p.module, t).work_class, WorkClass::kGemm);
}

// XLA's dynamic-slice fusion (notriton scan body, hold-out set 25's sem):
// a cuBLAS call on one slice of the loop's stacked operand. It is that
// call's GEMM: it reads the slice, not the stack, and its 32 MiB workspace
// is scratch, not output (the model had costed it 8 us of HBM writes, 2-4x
// the measured call); and it pays the call's fixed cost.
constexpr const char* kDynamicSliceFusion = R"(HloModule m, is_scheduled=true
%dynamic-slice-fusion (p0: bf16[24,128,384], p1: s32[], p2: bf16[384,384]) -> (bf16[128,384], s8[33554432]) {
  %p0 = bf16[24,128,384]{2,1,0} parameter(0)
  %p1 = s32[] parameter(1)
  %constant_3 = s32[] constant(0)
  %dynamic_slice.2 = bf16[1,128,384]{2,1,0} dynamic-slice(%p0, %p1, %constant_3, %constant_3), dynamic_slice_sizes={1,128,384}
  %bitcast.2 = bf16[128,384]{1,0} bitcast(%dynamic_slice.2)
  %p2 = bf16[384,384]{1,0} parameter(2)
  ROOT %custom-call.3 = (bf16[128,384]{1,0}, s8[33554432]{0}) custom-call(%bitcast.2, %p2), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"DEFAULT"}}
}
ENTRY %main (xs: bf16[24,128,384], i: s32[], w: bf16[384,384]) -> (bf16[128,384], s8[33554432]) {
  %xs = bf16[24,128,384]{2,1,0} parameter(0)
  %i = s32[] parameter(1)
  %w = bf16[384,384]{1,0} parameter(2)
  ROOT %dynamic_slice_fusion = (bf16[128,384]{1,0}, s8[33554432]{0}) fusion(%xs, %i, %w), kind=kCustom, calls=%dynamic-slice-fusion, backend_config={"fusion_backend_config":{"custom_fusion_config":{"kernel_index":0,"name":"dynamic_slice_fusion"},"kind":"__custom_fusion"}}
}
)";

TEST(KernelContent, ADynamicSliceFusionIsItsCublasCallOnTheSlice) {
  Parsed p = parse(kDynamicSliceFusion);
  KernelWork w = p.work("dynamic_slice_fusion");
  ASSERT_EQ(w.work_class, WorkClass::kGemm);
  EXPECT_EQ(w.gemm.m, 128);
  EXPECT_EQ(w.gemm.n, 384);
  EXPECT_EQ(w.gemm.k, 384);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 128 * 384 * 384);
  EXPECT_DOUBLE_EQ(w.bytes_read, 128.0 * 384 * 2 + 4 + 384.0 * 384 * 2);
  EXPECT_DOUBLE_EQ(w.bytes_written, 128.0 * 384 * 2);

  Result<sched::LoweredProgram> lowered = sched::lower(p.module, {});
  ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
  ASSERT_EQ(lowered->devices.at(0).thunks.size(), 1u);
  const sched::Thunk& thunk = lowered->devices[0].thunks[0];
  EXPECT_EQ(thunk.kind, sched::ThunkKind::kKernel);
  EXPECT_TRUE(thunk.fusion_calls_library);
  EXPECT_TRUE(is_library_call(thunk));
  DeviceModel m = h200();
  sched::Thunk plain = thunk;
  plain.fusion_calls_library = false;
  EXPECT_NEAR(content_cost(m, thunk, w, false).work_ns - content_cost(m, plain, w, false).work_ns,
              m.cublas_call_us * 1e3, 1e-6);
  // A Triton GEMM fusion is no library call.
  Parsed triton = parse(kTritonGemm);
  Result<sched::LoweredProgram> gemm = sched::lower(triton.module, {});
  ASSERT_TRUE(gemm.is_ok()) << gemm.status().message();
  EXPECT_FALSE(gemm->devices.at(0).thunks.at(0).fusion_calls_library);
}

// The other dynamic-slice fusion of a notriton scan body (hold-out set 30's
// lam): the cuBLAS call's result goes into one slice of the stacked output,
// and the root tuple returns the call's workspace as `custom-call.7#1`
// beside it. That element is the same scratch: the fusion writes the slice
// only (it had been costed 32 MiB of writes, 13.4 us, where it ran 2.4).
constexpr const char* kDynamicUpdateSliceFusion = R"(HloModule m, is_scheduled=true
%dynamic-slice-fusion.1 (p0.1: bf16[64,192], p1.1: bf16[192,192], p2.1: bf16[24,64,192], p3: s32[]) -> (bf16[24,64,192], s8[33554432]) {
  %p2.1 = bf16[24,64,192]{2,1,0} parameter(2)
  %p0.1 = bf16[64,192]{1,0} parameter(0)
  %p1.1 = bf16[192,192]{1,0} parameter(1)
  %custom-call.7 = (bf16[64,192]{1,0}, s8[33554432]{0}) custom-call(%p0.1, %p1.1), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"DEFAULT"}}
  %bitcast.3 = bf16[1,64,192]{2,1,0} bitcast(%custom-call.7#0)
  %p3 = s32[] parameter(3)
  %constant_3 = s32[] constant(0)
  %dynamic_update_slice.2 = bf16[24,64,192]{2,1,0} dynamic-update-slice(%p2.1, %bitcast.3, %p3, %constant_3, %constant_3)
  ROOT %tuple.2 = (bf16[24,64,192]{2,1,0}, s8[33554432]{0}) tuple(%dynamic_update_slice.2, %custom-call.7#1)
}
ENTRY %main (h: bf16[64,192], w: bf16[192,192], ys: bf16[24,64,192], i: s32[]) -> (bf16[24,64,192], s8[33554432]) {
  %h = bf16[64,192]{1,0} parameter(0)
  %w = bf16[192,192]{1,0} parameter(1)
  %ys = bf16[24,64,192]{2,1,0} parameter(2)
  %i = s32[] parameter(3)
  ROOT %dynamic_slice_fusion.1 = (bf16[24,64,192]{2,1,0}, s8[33554432]{0}) fusion(%h, %w, %ys, %i), kind=kCustom, calls=%dynamic-slice-fusion.1, backend_config={"fusion_backend_config":{"custom_fusion_config":{"kernel_index":0,"name":"dynamic_slice_fusion"},"kind":"__custom_fusion"}}
}
)";

TEST(KernelContent, ADynamicSliceFusionReturningItsWorkspaceWritesTheSliceOnly) {
  Parsed p = parse(kDynamicUpdateSliceFusion);
  KernelWork w = p.work("dynamic_slice_fusion.1");
  ASSERT_EQ(w.work_class, WorkClass::kGemm);
  EXPECT_EQ(w.gemm.m, 64);
  EXPECT_EQ(w.gemm.n, 192);
  EXPECT_EQ(w.gemm.k, 192);
  EXPECT_DOUBLE_EQ(w.bytes_read, 64.0 * 192 * 2 + 192.0 * 192 * 2 + 4);
  EXPECT_DOUBLE_EQ(w.bytes_written, 64.0 * 192 * 2);
}

// Through the sim backend (which hands the engine the module): the GEMM
// fusion's event reports its dot's flops and takes at least the peak's time;
// the opaque custom-call is counted as costed by bytes.
TEST(KernelContent, EngineCostsByContentAndCountsOpaqueCustomCalls) {
  DeviceModel m = h200();
  for (const char* text : {kTritonGemm, kCustomCalls}) {
    Parsed p = parse(text);
    Result<sched::LoweredProgram> lowered = sched::lower(p.module, {});
    ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
    Result<exec::RunOutput> out = make_sim_backend(m)->run(*lowered, exec::RunOptions{});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    const trace::Trace& t = out->trace;
    if (text == kTritonGemm) {
      ASSERT_EQ(t.events.size(), 1u);
      EXPECT_EQ(t.events[0].flops, int64_t{2} * 8192 * 2048 * 2048);
      // A Triton GEMM fusion is drawn and counted as a GEMM, not "other".
      EXPECT_EQ(t.events[0].kind, trace::EventKind::kGemm);
      EXPECT_GE(static_cast<double>(t.events[0].end_ns - t.events[0].start_ns), 68.7e9 / 989e12 * 1e9);
      EXPECT_TRUE(t.counters.empty());
    } else {
      bool counted = false;
      for (const trace::Counter& c : t.counters) counted |= c.name == kCustomCallsByBytesCounter && c.value == 1;
      EXPECT_TRUE(counted);
    }
  }
}

TEST(KernelContent, LoopFusionEventsAreElementwiseAndNamedAsXlaNamesTheirKernels) {
  Parsed p = parse(R"(HloModule m, is_scheduled=true
%fused (a: f32[1024]) -> f32[1024] {
  %a = f32[1024]{0} parameter(0)
  ROOT %t = f32[1024]{0} tanh(%a)
}
ENTRY %main (x: f32[1024]) -> f32[1024] {
  %x = f32[1024]{0} parameter(0)
  ROOT %loop_tanh_fusion.2 = f32[1024]{0} fusion(%x), kind=kLoop, calls=%fused
}
)");
  Result<sched::LoweredProgram> lowered = sched::lower(p.module, {});
  ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
  Result<exec::RunOutput> out = make_sim_backend(h200())->run(*lowered, exec::RunOptions{});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  ASSERT_EQ(out->trace.events.size(), 1u);
  EXPECT_EQ(out->trace.events[0].kind, trace::EventKind::kElementwise);
  EXPECT_EQ(out->trace.strings.get(out->trace.events[0].name), "loop_tanh_fusion_2");
}

}  // namespace
}  // namespace sl::sim
