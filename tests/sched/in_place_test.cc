// In-place dynamic-update-slice and scatter fusions: the result takes its operand's buffer only
// when nothing reads the operand afterwards.

#include <gtest/gtest.h>

#include <string>

#include "tests/sched/sched_test_util.h"

namespace sl::sched {
namespace {

using testing::find_thunk;
using testing::lower_text;

const Thunk& thunk_of(const testing::Lowered& l, const char* name, int occurrence = 0) {
  int i = find_thunk(l.thunks(), name, occurrence);
  EXPECT_GE(i, 0) << name;
  return l.thunks().at(static_cast<size_t>(i < 0 ? 0 : i));
}

// A loop accumulates rows into %acc with a dynamic-update-slice per step.
constexpr const char* kLoop = R"(
HloModule m
%body {
  %s = (f32[8,4]{1,0}, s32[]) parameter(0)
  %acc = f32[8,4]{1,0} get-tuple-element(%s), index=0
  %i = s32[] get-tuple-element(%s), index=1
  %one = f32[] constant(1)
  %row = f32[2,4]{1,0} broadcast(%one), dimensions={}
  %zero = s32[] constant(0)
  %two = s32[] constant(2)
  %at = s32[] multiply(%i, %two)
  %acc.next = f32[8,4]{1,0} dynamic-update-slice(%acc, %row, %at, %zero)
  %c1 = s32[] constant(1)
  %i.next = s32[] add(%i, %c1)
  ROOT %t = (f32[8,4]{1,0}, s32[]) tuple(%acc.next, %i.next)
}
%cond {
  %s = (f32[8,4]{1,0}, s32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=1
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
ENTRY %main {
  %z = f32[] constant(0)
  %init.acc = f32[8,4]{1,0} broadcast(%z), dimensions={}
  %i0 = s32[] constant(0)
  %init = (f32[8,4]{1,0}, s32[]) tuple(%init.acc, %i0)
  %loop = (f32[8,4]{1,0}, s32[]) while(%init), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"4"}}
  ROOT %out = f32[8,4]{1,0} get-tuple-element(%loop), index=0
})";

TEST(InPlace, AccumulatorUpdatesShareOneBuffer) {
  auto l = lower_text(kLoop);
  ASSERT_TRUE(l);
  const BufferSlice acc = thunk_of(*l, "init.acc").results[0];
  for (int step = 0; step < 4; ++step) {
    const Thunk& dus = thunk_of(*l, "acc.next", step);
    EXPECT_EQ(dus.operands[0].offset, acc.offset) << "step " << step;
    EXPECT_EQ(dus.results[0].offset, acc.offset) << "step " << step;
    // Reads the 2x4 update and two s32 starts, writes the update.
    EXPECT_EQ(dus.bytes_accessed, 2 * 2 * 4 * 4 + 2 * 4) << "step " << step;
  }
  EXPECT_EQ(l->program.buffers.outputs.at(0).offset, acc.offset);
}

TEST(InPlace, OperandReadAfterwardsKeepsItsBuffer) {
  auto l = lower_text(R"(
HloModule m
ENTRY %main {
  %p = f32[8]{0} parameter(0)
  %x = f32[8]{0} negate(%p)
  %u = f32[2]{0} parameter(1)
  %k = s32[] parameter(2)
  %d = f32[8]{0} dynamic-update-slice(%x, %u, %k)
  %later = f32[8]{0} add(%x, %d)
  ROOT %t = (f32[8]{0}, f32[8]{0}) tuple(%d, %later)
})");
  ASSERT_TRUE(l);
  const Thunk& d = thunk_of(*l, "d");
  EXPECT_NE(d.operands[0].offset, d.results[0].offset);
  EXPECT_EQ(d.bytes_accessed, (8 + 2 + 1) * 4 + 8 * 4);
}

TEST(InPlace, EntryParameterIsNeverOverwritten) {
  auto l = lower_text(R"(
HloModule m
ENTRY %main {
  %p = f32[8]{0} parameter(0)
  %u = f32[2]{0} parameter(1)
  %k = s32[] parameter(2)
  ROOT %d = f32[8]{0} dynamic-update-slice(%p, %u, %k)
})");
  ASSERT_TRUE(l);
  const Thunk& d = thunk_of(*l, "d");
  EXPECT_NE(d.operands[0].offset, d.results[0].offset);
}

// The operand is read by an async computation on another stream whose done
// comes after the update: writing it in place would race with that read.
TEST(InPlace, OperandStillReadOnAnotherStreamKeepsItsBuffer) {
  auto l = lower_text(R"(
HloModule m
%neg {
  %a = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} negate(%a)
}
ENTRY %main {
  %p = f32[8]{0} parameter(0)
  %x = f32[8]{0} negate(%p)
  %start = ((f32[8]{0}), f32[8]{0}) async-start(%x), calls=%neg, backend_config={"operation_queue_id":"1"}
  %u = f32[2]{0} parameter(1)
  %k = s32[] parameter(2)
  %d = f32[8]{0} dynamic-update-slice(%x, %u, %k)
  %done = f32[8]{0} async-done(%start)
  ROOT %t = (f32[8]{0}, f32[8]{0}) tuple(%d, %done)
})");
  ASSERT_TRUE(l);
  const Thunk& d = thunk_of(*l, "d");
  EXPECT_NE(d.operands[0].offset, d.results[0].offset);
}

// A dynamic-slice fusion (XLA's form of a scan's per-trip GEMM without
// Triton) writes its cuBLAS call's product into one slice of the stack and
// returns the call's 32 MiB workspace beside it. `stack` is the entry's
// instruction that makes the stack.
std::string dynamic_slice_fusion(const std::string& stack) {
  return R"(
HloModule m
%dsf (p0: bf16[64,192], p1: bf16[192,192], p2: bf16[24,64,192], p3: s32[]) -> (bf16[24,64,192], s8[33554432]) {
  %p2 = bf16[24,64,192]{2,1,0} parameter(2)
  %p0 = bf16[64,192]{1,0} parameter(0)
  %p1 = bf16[192,192]{1,0} parameter(1)
  %cc = (bf16[64,192]{1,0}, s8[33554432]{0}) custom-call(%p0, %p1), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]}}}
  %y = bf16[64,192]{1,0} get-tuple-element(%cc), index=0
  %b = bf16[1,64,192]{2,1,0} bitcast(%y)
  %p3 = s32[] parameter(3)
  %z = s32[] constant(0)
  %dus = bf16[24,64,192]{2,1,0} dynamic-update-slice(%p2, %b, %p3, %z, %z)
  %ws = s8[33554432]{0} get-tuple-element(%cc), index=1
  ROOT %t = (bf16[24,64,192]{2,1,0}, s8[33554432]{0}) tuple(%dus, %ws)
}
ENTRY %main {
  %h = bf16[64,192]{1,0} parameter(0)
  %w = bf16[192,192]{1,0} parameter(1)
  %p = bf16[24,64,192]{2,1,0} parameter(2)
  %i = s32[] parameter(3)
  )" + stack + R"(
  ROOT %f = (bf16[24,64,192]{2,1,0}, s8[33554432]{0}) fusion(%h, %w, %ys, %i), kind=kCustom, calls=%dsf
})";
}

constexpr int64_t kStackBytes = 24 * 64 * 192 * 2;
constexpr int64_t kProductBytes = 64 * 192 * 2;
constexpr int64_t kOtherReads = kProductBytes + 192 * 192 * 2 + 4;  // h, w and the index

}  // namespace
// The transformer's scatter-add of the loss gradient: a scatter fusion whose
// operand (a broadcast zero) is dead after it.
std::string scatter_fusion(const char* extra_use) {
  return std::string(R"(
HloModule m
%add {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
%fused_scatter {
  %op = f32[64,16]{1,0} parameter(0)
  %ix = s32[4,1]{1,0} parameter(1)
  %k = f32[] constant(1)
  %up = f32[4,16]{1,0} broadcast(%k), dimensions={}
  )") + extra_use + R"(
  ROOT %sc = f32[64,16]{1,0} scatter(%op, %ix, %up), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add
}
%fused_zero {
  %z = f32[] constant(0)
  ROOT %b = f32[64,16]{1,0} broadcast(%z), dimensions={}
}
ENTRY %main {
  %i = s32[4,1]{1,0} parameter(0)
  %zero = f32[64,16]{1,0} fusion(), kind=kLoop, calls=%fused_zero
  ROOT %f = f32[64,16]{1,0} fusion(%zero, %i), kind=kInput, calls=%fused_scatter
})";
}

TEST(InPlace, ScatterFusionWritesIntoItsDeadOperand) {
  auto l = lower_text(scatter_fusion(""));
  ASSERT_TRUE(l);
  const Thunk& f = thunk_of(*l, "f");
  EXPECT_EQ(f.operands[0].offset, f.results[0].offset);
  EXPECT_EQ(f.operands[0].offset, thunk_of(*l, "zero").results[0].offset);
  // Reads the s32[4,1] indices and writes the f32[4,16] update window.
  EXPECT_EQ(f.bytes_accessed, 4 * 4 + 4 * 16 * 4);
}

TEST(InPlace, ScatterFusionReadingItsOperandElsewhereKeepsTheCopy) {
  auto l = lower_text(scatter_fusion("%other = f32[64,16]{1,0} negate(%op)"));
  ASSERT_TRUE(l);
  const Thunk& f = thunk_of(*l, "f");
  EXPECT_NE(f.operands[0].offset, f.results[0].offset);
}

TEST(InPlace, ADynamicSliceFusionUpdatesItsStackInPlaceBesideItsWorkspace) {
  auto l = lower_text(dynamic_slice_fusion("%ys = bf16[24,64,192]{2,1,0} negate(%p)"));
  ASSERT_TRUE(l);
  const Thunk& f = thunk_of(*l, "f");
  EXPECT_TRUE(f.fusion_calls_library);
  ASSERT_EQ(f.results.size(), 2u);
  EXPECT_EQ(f.results[0].offset, f.operands[2].offset);
  EXPECT_EQ(f.operands[2].offset, thunk_of(*l, "ys").results[0].offset);
  // The workspace stays a result of its own, scratch and not written bytes.
  EXPECT_EQ(f.results[1].size, 33554432);
  EXPECT_NE(f.results[1].offset, f.results[0].offset);
  EXPECT_EQ(f.bytes_accessed, kOtherReads + kProductBytes);
}

TEST(InPlace, ADynamicSliceFusionOnAnEntryParameterCopiesTheStack) {
  auto l = lower_text(dynamic_slice_fusion("%ys = bf16[24,64,192]{2,1,0} bitcast(%p)"));
  ASSERT_TRUE(l);
  const Thunk& f = thunk_of(*l, "f");
  EXPECT_NE(f.results[0].offset, f.operands[2].offset);
  // Reads the whole stack and writes it whole; the workspace is not counted.
  EXPECT_EQ(f.bytes_accessed, kOtherReads + 2 * kStackBytes);
}

}  // namespace sl::sched
