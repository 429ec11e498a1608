// Verifier rules for the opcodes beyond the first version: elementwise math on
// every type, bitcast-convert, clamp, gather/scatter, pad, windows, sort, topk,
// tokens and barriers, and control-predecessor cycles. Fields the text cannot
// carry yet are set on the parsed module directly.

#include <gtest/gtest.h>

#include "tests/hlo/verify_test_util.h"

namespace sl::hlo {
namespace {

using testing::dump;
using testing::expect_error;
using testing::expect_error_in;
using testing::expect_valid;
using testing::parse_or_die;

std::string entry(std::string_view body) { return "HloModule m\n\nENTRY %main {\n" + std::string(body) + "}\n"; }

Instruction& find(Module& module, std::string_view name) {
  Computation& c = module.computations[static_cast<size_t>(module.entry)];
  return c.instructions[static_cast<size_t>(c.find(name))];
}

TEST(VerifyNewOps, UnaryMathOnNewTypes) {
  expect_valid(entry(R"(  %a = bf16[4] parameter(0)
  %t = bf16[4] tanh(%a)
  %r = bf16[4] rsqrt(%t)
  %l = bf16[4] log-plus-one(%r)
  %u = u8[4] parameter(1)
  %n = u8[4] not(%u)
  %p = u8[4] popcnt(%n)
  %s = s4[4] parameter(2)
  %sh = s4[4] shift-left(%s, %s)
  %w = u64[4] parameter(3)
  %x = u64[4] xor(%w, %w)
  %f = f8e4m3fn[4] parameter(4)
  %fm = f8e4m3fn[4] multiply(%f, %f)
  %fin = pred[4] is-finite(%a)
  ROOT %out = (bf16[4], u8[4], s4[4], u64[4], f8e4m3fn[4], pred[4]) tuple(%l, %p, %sh, %x, %fm, %fin)
)"));
}

TEST(VerifyNewOps, UnaryTakesOneOperand) {
  expect_error(entry(R"(  %a = f32[4] parameter(0)
  ROOT %t = f32[4] tanh(%a, %a)
)"),
               "%t =", "tanh takes 1 operand but has 2");
}

TEST(VerifyNewOps, TanhNeedsFloats) {
  expect_error(entry(R"(  %a = s32[4] parameter(0)
  ROOT %t = s32[4] tanh(%a)
)"),
               "%t =", "tanh needs a floating-point or complex type");
}

TEST(VerifyNewOps, MixedFloatPrecisionAccepted) {
  expect_valid(entry(R"(  %a = bf16[4] parameter(0)
  %b = f32[4] parameter(1)
  ROOT %s = f32[4] add(%a, %b)
)"));
}

TEST(VerifyNewOps, Clamp) {
  expect_valid(entry(R"(  %lo = f32[] parameter(0)
  %x = f32[4] parameter(1)
  %hi = f32[4] parameter(2)
  ROOT %c = f32[4] clamp(%lo, %x, %hi)
)"));
  expect_error(entry(R"(  %lo = f32[2] parameter(0)
  %x = f32[4] parameter(1)
  ROOT %c = f32[4] clamp(%lo, %x, %lo)
)"),
               "%c =", "clamp bound 0 (f32[2]) must be a f32[] scalar or have the shape of the operand f32[4]");
}

TEST(VerifyNewOps, BitcastConvertSizes) {
  expect_valid(entry(R"(  %a = f32[4] parameter(0)
  %same = u32[4] bitcast-convert(%a)
  %narrow = u8[4,4] bitcast-convert(%a)
  %wide = f32[4] bitcast-convert(%narrow)
  ROOT %t = (u32[4], f32[4]) tuple(%same, %wide)
)"));
  expect_error(entry(R"(  %a = f32[4] parameter(0)
  ROOT %b = u8[4] bitcast-convert(%a)
)"),
               "%b =", "bitcast-convert from f32[4] to u8[4] must give dimensions [4,4]");
  expect_error(entry(R"(  %a = u8[4,2] parameter(0)
  ROOT %b = f32[4] bitcast-convert(%a)
)"),
               "%b =", "needs a minor dimension of size 4");
}

TEST(VerifyNewOps, TokensAndBarriers) {
  expect_valid(entry(R"(  %a = f32[4] parameter(0)
  %t0 = token[] after-all()
  %t1 = token[] after-all(%t0, %t0)
  %d = f32[4] add-dependency(%a, %t1)
  %pair = (f32[4], token[]) tuple(%d, %t1)
  %b = (f32[4], token[]) opt-barrier(%pair)
  ROOT %r = f32[4] get-tuple-element(%b), index=0
)"));
  // XLA checks only after-all's result: any operand orders it.
  expect_valid(entry(R"(  %a = f32[4] parameter(0)
  ROOT %t = token[] after-all(%a)
)"));
  expect_error(entry(R"(  %a = f32[4] parameter(0)
  ROOT %t = f32[4] after-all(%a)
)"),
               "%t =", "token");
}

TEST(VerifyNewOps, SendRecv) {
  expect_valid(entry(R"(  %a = f32[4] parameter(0)
  %tok = token[] after-all()
  %s = (f32[4], u32[], token[]) send(%a, %tok), channel_id=1
  %sd = token[] send-done(%s), channel_id=1
  %r = (f32[4], u32[], token[]) recv(%tok), channel_id=2
  %rd = (f32[4], token[]) recv-done(%r), channel_id=2
  ROOT %out = f32[4] get-tuple-element(%rd), index=0
)"));
  expect_error(entry(R"(  %a = f32[4] parameter(0)
  %tok = token[] after-all()
  ROOT %s = f32[4] send(%a, %tok), channel_id=1
)"),
               "%s =", "send shape must be (f32[4], u32[], token[])");
}

TEST(VerifyNewOps, SortVariadic) {
  expect_valid(R"(HloModule m

%cmp {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = s32[] parameter(2)
  %d = s32[] parameter(3)
  ROOT %lt = pred[] compare(%a, %b), direction=LT
}

ENTRY %main {
  %k = f32[8] parameter(0)
  %v = s32[8] parameter(1)
  ROOT %s = (f32[8], s32[8]) sort(%k, %v), dimensions={0}, to_apply=%cmp
}
)");
  expect_error(R"(HloModule m

%cmp {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %lt = pred[] compare(%a, %b), direction=LT
}

ENTRY %main {
  %k = f32[8] parameter(0)
  ROOT %s = f32[8] sort(%k), dimensions={1}, to_apply=%cmp
}
)",
               "%s =", "sort needs one dimension in [0, 1)");
}

TEST(VerifyNewOps, CustomCallAnyShape) {
  expect_valid(entry(R"(  %a = f32[4] parameter(0)
  ROOT %c = (f32[2,2], s8[16], token[]) custom-call(%a), custom_call_target="my_kernel"
)"));
}

TEST(VerifyNewOps, GatherShapeFromDimensionNumbers) {
  // XLA's canonical "gather rows": operand [3,4], indices [2] -> [2,4].
  std::string text = entry(R"(  %op = f32[3,4] parameter(0)
  %idx = s32[2] parameter(1)
  ROOT %g = f32[2,4] gather(%op, %idx)
)");
  Module module = parse_or_die(text);
  ASSERT_FALSE(module.computations.empty());
  Instruction& g = find(module, "g");
  g.gather.offset_dims = {1};
  g.gather.collapsed_slice_dims = {0};
  g.gather.start_index_map = {0};
  g.gather.index_vector_dim = 1;
  g.gather.slice_sizes = {1, 4};
  EXPECT_TRUE(verify(module).empty()) << dump(verify(module), text);
  g.shape.dims = {2, 3};
  expect_error_in(module, text, "%g =", "gather result shape f32[2,3] does not match the inferred shape f32[2,4]");
  g.gather.slice_sizes = {2, 4};
  expect_error_in(module, text, "%g =", "collapsed dimension 0 has slice size 2");
}

TEST(VerifyNewOps, ScatterKeepsOperandShape) {
  std::string text = R"(HloModule m

%add {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main {
  %op = f32[3,4] parameter(0)
  %idx = s32[2] parameter(1)
  %upd = f32[2,4] parameter(2)
  ROOT %sc = f32[3,4] scatter(%op, %idx, %upd), to_apply=%add
}
)";
  Module module = parse_or_die(text);
  ASSERT_FALSE(module.computations.empty());
  Instruction& sc = find(module, "sc");
  sc.scatter.update_window_dims = {1};
  sc.scatter.inserted_window_dims = {0};
  sc.scatter.scatter_dims_to_operand_dims = {0};
  sc.scatter.index_vector_dim = 1;
  EXPECT_TRUE(verify(module).empty()) << dump(verify(module), text);
  sc.scatter.inserted_window_dims = {2};
  expect_error_in(module, text, "%sc =", "scatter inserted_window_dims names dimension 2, out of range for rank 2");
}

TEST(VerifyNewOps, PadShape) {
  std::string text = entry(R"(  %a = f32[3] parameter(0)
  %z = f32[] constant(0)
  ROOT %p = f32[8] pad(%a, %z)
)");
  Module module = parse_or_die(text);
  ASSERT_FALSE(module.computations.empty());
  find(module, "p").padding = {PadDim{1, 2, 1}};  // 1 + 2 + 3 + 2 * 1 = 8
  EXPECT_TRUE(verify(module).empty()) << dump(verify(module), text);
  find(module, "p").padding = {PadDim{-1, 0, 0}};
  expect_error_in(module, text, "%p =", "pad result shape f32[8] does not match the inferred shape f32[2]");
}

TEST(VerifyNewOps, ReduceWindowShape) {
  std::string text = R"(HloModule m

%max {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}

ENTRY %main {
  %x = f32[8,8] parameter(0)
  %init = f32[] constant(0)
  ROOT %rw = f32[4,8] reduce-window(%x, %init), to_apply=%max
}
)";
  Module module = parse_or_die(text);
  ASSERT_FALSE(module.computations.empty());
  WindowDim pool;
  pool.size = 2;
  pool.stride = 2;
  WindowDim keep;
  find(module, "rw").window = {pool, keep};
  EXPECT_TRUE(verify(module).empty()) << dump(verify(module), text);
  find(module, "rw").window = {keep, keep};
  expect_error_in(module, text, "%rw =", "does not match the inferred shape f32[8,8]");
}

TEST(VerifyNewOps, TopK) {
  std::string text = entry(R"(  %x = f32[4,10] parameter(0)
  ROOT %t = (f32[4,3], s32[4,3]) topk(%x)
)");
  Module module = parse_or_die(text);
  ASSERT_FALSE(module.computations.empty());
  find(module, "t").k = 3;
  EXPECT_TRUE(verify(module).empty()) << dump(verify(module), text);
  find(module, "t").k = 11;
  expect_error_in(module, text, "%t =", "topk k=11 must be in [0, 10]");
}

TEST(VerifyNewOps, RngBitGenerator) {
  expect_valid(entry(R"(  %state = u64[2] parameter(0)
  ROOT %r = (u64[2], u32[4,4]) rng-bit-generator(%state), algorithm=rng_default
)"));
}

TEST(VerifyNewOps, CollectiveBroadcastAndAllToAll) {
  expect_valid(R"(HloModule m, replica_count=2

ENTRY %main {
  %a = f32[4] parameter(0)
  %b = f32[4] collective-broadcast(%a), replica_groups={{0,1}}
  ROOT %c = f32[4] all-to-all(%b), replica_groups={{0,1}}, dimensions={0}
}
)");
}

TEST(VerifyNewOps, ControlPredecessorCycle) {
  std::string text = entry(R"(  %a = f32[4] parameter(0)
  %b = f32[4] negate(%a)
  %c = f32[4] abs(%a)
  ROOT %t = (f32[4], f32[4]) tuple(%b, %c)
)");
  Module module = parse_or_die(text);
  ASSERT_FALSE(module.computations.empty());
  Computation& c = module.computations[static_cast<size_t>(module.entry)];
  const int b = c.find("b"), cc = c.find("c");
  c.instructions[static_cast<size_t>(cc)].control_predecessors = {b};
  EXPECT_TRUE(verify(module).empty()) << dump(verify(module), text);
  c.instructions[static_cast<size_t>(b)].control_predecessors = {cc};
  std::vector<Diagnostic> diagnostics = verify(module);
  ASSERT_EQ(diagnostics.size(), 1u) << dump(diagnostics, text);
  EXPECT_NE(diagnostics[0].message.find("form a cycle"), std::string::npos) << diagnostics[0].message;
  EXPECT_GT(diagnostics[0].loc.line, 0);
}

}  // namespace
}  // namespace sl::hlo
