// The wider elementwise set: transcendentals, rounding, bit ops and shifts,
// clamp, power, reduce-precision, bitcast-convert and conversions between
// every type, against values computed by hand or from XLA's definitions.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/exec/cpu/ops.h"
#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using testing::entry;
using testing::run_hlo;
using testing::values_of;

using V = std::vector<double>;

using testing::binary;
using testing::unary;

double f(float x) { return static_cast<double>(x); }
// Keeps the compiler from folding the expected values with its own
// (correctly rounded) math: the evaluator calls the host's libm at run time.
float vol(float x) {
  volatile float v = x;
  return v;
}

TEST(ElementwiseMath, F32TranscendentalsComputeInF32) {
  EXPECT_EQ(unary("rsqrt", "f32", "{4, 1, 0.25, 2}"), (V{0.5, 1, 2, f(1.0f / std::sqrt(vol(2.0f)))}));
  EXPECT_EQ(unary("sqrt", "f32", "{4, 1, 0, 2}"), (V{2, 1, 0, f(std::sqrt(vol(2.0f)))}));
  EXPECT_EQ(unary("cbrt", "f32", "{8, -27, 0, 2}"), (V{2, -3, 0, f(std::cbrt(vol(2.0f)))}));
  EXPECT_EQ(unary("tanh", "f32", "{0, 1, -1, 0.5}"),
            (V{0, f(std::tanh(vol(1.0f))), f(std::tanh(vol(-1.0f))), f(std::tanh(vol(0.5f)))}));
  EXPECT_EQ(unary("logistic", "f32", "{0, 1, -1, 2}"),
            (V{0.5, f(1.0f / (1.0f + std::exp(vol(-1.0f)))), f(1.0f / (1.0f + std::exp(vol(1.0f)))),
               f(1.0f / (1.0f + std::exp(vol(-2.0f))))}));
  EXPECT_EQ(unary("erf", "f32", "{0, 1, -1, 0.5}"),
            (V{0, f(std::erf(vol(1.0f))), f(std::erf(vol(-1.0f))), f(std::erf(vol(0.5f)))}));
  EXPECT_EQ(unary("log", "f32", "{1, 2, 0.5, 10}"),
            (V{0, f(std::log(vol(2.0f))), f(std::log(vol(0.5f))), f(std::log(vol(10.0f)))}));
  EXPECT_EQ(unary("log-plus-one", "f32", "{0, 1, 1e-7, -0.5}"),
            (V{0, f(std::log1p(vol(1.0f))), f(std::log1p(vol(1e-7f))), f(std::log1p(vol(-0.5f)))}));
  EXPECT_EQ(unary("exponential-minus-one", "f32", "{0, 1, 1e-7, -1}"),
            (V{0, f(std::expm1(vol(1.0f))), f(std::expm1(vol(1e-7f))), f(std::expm1(vol(-1.0f)))}));
  EXPECT_EQ(unary("sine", "f32", "{0, 1, -1, 3}"), (V{0, f(std::sin(vol(1.0f))), f(std::sin(vol(-1.0f))), f(std::sin(vol(3.0f)))}));
  EXPECT_EQ(unary("cosine", "f32", "{0, 1, -1, 3}"), (V{1, f(std::cos(vol(1.0f))), f(std::cos(vol(-1.0f))), f(std::cos(vol(3.0f)))}));
  EXPECT_EQ(unary("tan", "f32", "{0, 1, -1, 3}"), (V{0, f(std::tan(vol(1.0f))), f(std::tan(vol(-1.0f))), f(std::tan(vol(3.0f)))}));
  EXPECT_EQ(unary("atan", "f32", "{0, 1, -1, 3}"), (V{0, f(std::atan(vol(1.0f))), f(std::atan(vol(-1.0f))), f(std::atan(vol(3.0f)))}));
  EXPECT_EQ(binary("atan2", "f32", "{1, 1, -1, 0}", "{1, -1, -1, 1}"),
            (V{f(std::atan2(vol(1.0f), vol(1.0f))), f(std::atan2(vol(1.0f), vol(-1.0f))), f(std::atan2(vol(-1.0f), vol(-1.0f))), 0}));
  V nan = unary("log", "f32", "{-1, 0, inf, nan}");
  ASSERT_EQ(nan.size(), 4u);
  EXPECT_TRUE(std::isnan(nan[0]));
  EXPECT_EQ(nan[1], -INFINITY);
  EXPECT_EQ(nan[2], INFINITY);
  EXPECT_TRUE(std::isnan(nan[3]));
}

TEST(ElementwiseMath, F64ComputesInDouble) {
  EXPECT_EQ(unary("tanh", "f64", "{0.5}", "1"), (V{std::tanh(0.5)}));
  EXPECT_EQ(unary("rsqrt", "f64", "{2}", "1"), (V{1.0 / std::sqrt(2.0)}));
}

TEST(ElementwiseMath, Bf16RoundsTheF32Result) {
  // tanh(1) = 0.76159... ; bf16 keeps 8 significant bits: 0.76171875.
  EXPECT_EQ(unary("tanh", "bf16", "{1}", "1"), (V{0.76171875}));
  // sqrt(2) = 1.41421... -> 1.4140625 in bf16, 1.4140625 in f16 (11 bits: 1.4140625).
  EXPECT_EQ(unary("sqrt", "bf16", "{2}", "1"), (V{1.4140625}));
  EXPECT_EQ(unary("sqrt", "f16", "{2}", "1"), (V{1.4140625}));
}

TEST(ElementwiseMath, Rounding) {
  EXPECT_EQ(unary("floor", "f32", "{1.5, -1.5, 2, -0.5}"), (V{1, -2, 2, -1}));
  EXPECT_EQ(unary("ceil", "f32", "{1.5, -1.5, 2, -0.5}"), (V{2, -1, 2, -0.0}));
  EXPECT_EQ(unary("round-nearest-afz", "f32", "{0.5, 1.5, 2.5, -2.5}"), (V{1, 2, 3, -3}));
  EXPECT_EQ(unary("round-nearest-even", "f32", "{0.5, 1.5, 2.5, -2.5}"), (V{0, 2, 2, -2}));
}

TEST(ElementwiseMath, SignAndIsFinite) {
  V s = unary("sign", "f32", "{-3, 0, 2, nan}");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], -1);
  EXPECT_EQ(s[1], 0);
  EXPECT_EQ(s[2], 1);
  EXPECT_TRUE(std::isnan(s[3]));
  EXPECT_EQ(unary("sign", "s32", "{-3, 0, 2, -1}"), (V{-1, 0, 1, -1}));
  EXPECT_EQ(unary("is-finite", "f32", "{1, inf, -inf, nan}", "4", "pred"), (V{1, 0, 0, 0}));
}

TEST(ElementwiseMath, PowerAndClamp) {
  EXPECT_EQ(binary("power", "f32", "{2, 0, 4, -2}", "{3, 0, 0.5, 2}"), (V{8, 1, 2, 4}));
  EXPECT_EQ(binary("power", "s32", "{2, 3, 2, -1}", "{10, 0, -1, -3}"), (V{1024, 1, 0, -1}));
  // 3^21 wraps in s32: 10460353203 mod 2^32 = 1870418611.
  EXPECT_EQ(binary("power", "s32", "{3}", "{21}", "1"), (V{1870418611}));
  EXPECT_EQ(values_of(run_hlo(entry("  lo = f32[] constant(-1)\n  hi = f32[] constant(2)\n"
                                    "  x = f32[4] constant({-5, 0.5, 7, -1})\n"
                                    "  ROOT r = f32[4] clamp(lo, x, hi)"))),
            (V{-1, 0.5, 2, -1}));
  EXPECT_EQ(values_of(run_hlo(entry("  lo = s32[4] constant({0, 0, 0, 0})\n  hi = s32[4] constant({3, 3, 3, 3})\n"
                                    "  x = s32[4] constant({-5, 1, 7, 3})\n"
                                    "  ROOT r = s32[4] clamp(lo, x, hi)"))),
            (V{0, 1, 3, 3}));
}

TEST(ElementwiseMath, BitOps) {
  EXPECT_EQ(binary("xor", "s32", "{5, -1, 0, 12}", "{3, 1, 0, 10}"), (V{6, -2, 0, 6}));
  EXPECT_EQ(binary("xor", "pred", "{1, 1, 0, 0}", "{1, 0, 1, 0}"), (V{0, 1, 1, 0}));
  EXPECT_EQ(binary("xor", "u32", "{4294967295, 0, 1, 2}", "{1, 4294967295, 1, 1}"),
            (V{4294967294.0, 4294967295.0, 0, 3}));
  EXPECT_EQ(unary("not", "pred", "{1, 0, 1, 0}"), (V{0, 1, 0, 1}));
  EXPECT_EQ(unary("not", "s32", "{0, -1, 5, 1}"), (V{-1, 0, -6, -2}));
  EXPECT_EQ(unary("not", "u8", "{0, 255, 5, 1}"), (V{255, 0, 250, 254}));
  EXPECT_EQ(unary("popcnt", "s32", "{0, -1, 7, 256}"), (V{0, 32, 3, 1}));
  EXPECT_EQ(unary("popcnt", "s8", "{-1, -128, 3, 0}"), (V{8, 1, 2, 0}));
  EXPECT_EQ(unary("count-leading-zeros", "s32", "{0, -1, 1, 256}"), (V{32, 0, 31, 23}));
  EXPECT_EQ(unary("count-leading-zeros", "u16", "{0, 65535, 1, 256}"), (V{16, 0, 15, 7}));
}

TEST(ElementwiseMath, ShiftsFollowXlaForLargeAmounts) {
  // XLA: amounts >= the bit width (unsigned, so negative ones too) give 0,
  // and all sign bits for an arithmetic right shift.
  EXPECT_EQ(binary("shift-left", "s32", "{1, 1, 1, 3}", "{31, 32, -1, 2}"), (V{-2147483648.0, 0, 0, 12}));
  EXPECT_EQ(binary("shift-left", "u32", "{4294967295, 1, 1, 7}", "{4, 33, 0, 29}"),
            (V{4294967280.0, 0, 1, 3758096384.0}));
  EXPECT_EQ(binary("shift-right-logical", "s32", "{-1, -1, 8, 8}", "{28, 32, 3, 40}"), (V{15, 0, 1, 0}));
  EXPECT_EQ(binary("shift-right-logical", "u32", "{4294967295, 2147483648, 8, 1}", "{31, 31, 4, 32}"),
            (V{1, 1, 0, 0}));
  EXPECT_EQ(binary("shift-right-arithmetic", "s32", "{-8, -8, 8, -1}", "{1, 32, 33, -1}"), (V{-4, -1, 0, -1}));
  EXPECT_EQ(binary("shift-right-arithmetic", "u32", "{4294967295, 2147483648, 16, 2147483648}", "{4, 31, 2, 40}"),
            (V{4294967295.0, 4294967295.0, 4, 4294967295.0}));
  EXPECT_EQ(binary("shift-right-arithmetic", "s8", "{-128, 64, -1, 1}", "{7, 6, 8, 0}"), (V{-1, 1, -1, 1}));
  // u64: 2^40 >> 32 = 256.
  EXPECT_EQ(binary("shift-right-logical", "u64", "{1099511627776}", "{32}", "1"), (V{256}));
}

TEST(ElementwiseMath, UnsignedIntegerArithmetic) {
  EXPECT_EQ(binary("divide", "u32", "{7, 4294967295, 5, 0}", "{2, 2, 0, 0}"),
            (V{3, 2147483647, 4294967295.0, 4294967295.0}));
  EXPECT_EQ(binary("remainder", "u32", "{7, 4294967295, 5, 0}", "{2, 10, 0, 3}"), (V{1, 5, 5, 0}));
  EXPECT_EQ(binary("add", "u32", "{4294967295, 1, 2, 3}", "{1, 1, 1, 1}"), (V{0, 2, 3, 4}));
  EXPECT_EQ(binary("subtract", "u8", "{0, 1, 2, 3}", "{1, 1, 1, 1}"), (V{255, 0, 1, 2}));
  EXPECT_EQ(binary("multiply", "u16", "{65535, 256, 2, 3}", "{2, 256, 1, 1}"), (V{65534, 0, 2, 3}));
  EXPECT_EQ(binary("add", "s16", "{32767, -32768, 2, 3}", "{1, -1, 1, 1}"), (V{-32768, 32767, 3, 4}));
}

TEST(ElementwiseMath, ConvertBetweenTypes) {
  EXPECT_EQ(unary("convert", "f32", "{300, -1, 2.7, nan}", "4", "u8"), (V{255, 0, 2, 0}));
  EXPECT_EQ(unary("convert", "f32", "{40000, -40000, -2.7, 1e10}", "4", "s16"), (V{32767, -32768, -2, 32767}));
  EXPECT_EQ(unary("convert", "f32", "{1e20, -1, 3, 4294967296}", "4", "u32"), (V{4294967295.0, 0, 3, 4294967295.0}));
  EXPECT_EQ(unary("convert", "s32", "{-1, 256, 255, 65536}", "4", "u8"), (V{255, 0, 255, 0}));
  EXPECT_EQ(unary("convert", "u32", "{4294967295, 5, 0, 65537}", "4", "u16"), (V{65535, 5, 0, 1}));
  EXPECT_EQ(unary("convert", "s32", "{-1, 5, 0, 7}", "4", "u64"), (V{18446744073709551615.0, 5, 0, 7}));
  // f8e4m3fn: 3 fraction bits, max 448, overflow -> NaN.
  V f8 = unary("convert", "f32", "{1.0625, 300, 1000, 0.01}", "4", "f8e4m3fn");
  ASSERT_EQ(f8.size(), 4u);
  EXPECT_EQ(f8[0], 1.0);  // tie between 1 and 1.125: even
  EXPECT_EQ(f8[1], 288);  // 300 -> 256 + 32k: 288
  EXPECT_TRUE(std::isnan(f8[2]));
  EXPECT_EQ(f8[3], 0.009765625);  // subnormal 5 * 2^-9
  EXPECT_EQ(unary("convert", "f32", "{1.1, 60000, 100000, -0.3}", "4", "f8e5m2"), (V{1.0, 57344, INFINITY, -0.3125}));
}

TEST(ElementwiseMath, BitcastConvertSameWidth) {
  EXPECT_EQ(unary("bitcast-convert", "f32", "{1, -2, 0, 0.5}", "4", "u32"),
            (V{1065353216.0, 3221225472.0, 0, 1056964608.0}));
  EXPECT_EQ(unary("bitcast-convert", "u32", "{1065353216, 3221225472, 0, 1056964608}", "4", "f32"), (V{1, -2, 0, 0.5}));
  EXPECT_EQ(unary("bitcast-convert", "f32", "{-1}", "1", "s32"), (V{-1082130432.0}));
  EXPECT_EQ(unary("bitcast-convert", "bf16", "{1, -2}", "2", "u16"), (V{0x3F80, 0xC000}));
  EXPECT_EQ(unary("bitcast-convert", "u16", "{15360, 48128}", "2", "f16"), (V{1, -1}));
  // f8e4m3fn: 0xFF is NaN, 0x38 is 2^(7-7) = 1, 0x01 the smallest subnormal 2^-9.
  V f8 = unary("bitcast-convert", "s8", "{-1, 56, 1}", "3", "f8e4m3fn");
  ASSERT_EQ(f8.size(), 3u);
  EXPECT_TRUE(std::isnan(f8[0]));
  EXPECT_EQ(f8[1], 1.0);
  EXPECT_EQ(f8[2], 0.001953125);
  EXPECT_EQ(unary("bitcast-convert", "f8e4m3fn", "{1, -0.001953125}", "2", "u8"), (V{56, 129}));
}

TEST(ElementwiseMath, BitcastConvertChangesWidth) {
  // u64 -> 2 x u32, least significant word first; and back.
  EXPECT_EQ(values_of(run_hlo(entry("  a = u64[2] constant({4294967298, 7})\n"
                                    "  ROOT r = u32[2,2] bitcast-convert(a)"))),
            (V{2, 1, 7, 0}));
  EXPECT_EQ(values_of(run_hlo(entry("  a = u32[2,2] constant({{2, 1}, {7, 0}})\n"
                                    "  ROOT r = u64[2] bitcast-convert(a)"))),
            (V{4294967298.0, 7}));
  EXPECT_EQ(values_of(run_hlo(entry("  a = f32[1] constant({1})\n  ROOT r = u8[1,4] bitcast-convert(a)"))),
            (V{0, 0, 128, 63}));
  EXPECT_EQ(values_of(run_hlo(entry("  a = u16[1,2] constant({{0, 16256}})\n  ROOT r = f32[1] bitcast-convert(a)"))),
            (V{1}));
}

// Built in code: the attributes are typed fields the evaluator reads.
V reduce_precision(const V& in, int exponent_bits, int mantissa_bits) {
  hlo::Instruction inst;
  inst.name = "r";
  inst.opcode = hlo::Opcode::kReducePrecision;
  inst.shape = hlo::Shape::array(hlo::PrimitiveType::kF32, {static_cast<int64_t>(in.size())});
  inst.exponent_bits = exponent_bits;
  inst.mantissa_bits = mantissa_bits;
  Literal operand{inst.shape, in};
  auto out = cpu::eval_elementwise(inst, {&operand});
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  return out.is_ok() ? out->values : V{};
}

TEST(ElementwiseMath, ReducePrecision) {
  // To bf16's 8 exponent / 7 mantissa bits: 1 + 2^-8 ties to 1, 1 + 3*2^-8 to 1 + 2^-6.
  EXPECT_EQ(reduce_precision({1.00390625, 1.01171875, 3}, 8, 7), (V{1, 1.015625, 3}));
  // To f16's 5 exponent bits: 70000 overflows to inf, 1e-5 (below 2^-14) flushes to zero.
  V h = reduce_precision({70000, 1e-5, -1e-5, 65504}, 5, 10);
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[0], INFINITY);
  EXPECT_EQ(h[1], 0.0);
  EXPECT_EQ(h[2], 0.0);
  EXPECT_TRUE(std::signbit(h[2]));
  EXPECT_EQ(h[3], 65504);
  V n = reduce_precision({NAN}, 5, 10);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_TRUE(std::isnan(n[0]));
}

}  // namespace
}  // namespace sl::exec
