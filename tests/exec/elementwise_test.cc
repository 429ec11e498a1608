// Elementwise numerics against hand-computed values, per element type.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using testing::entry;
using testing::run_hlo;
using testing::values_of;

using V = std::vector<double>;

using testing::binary;
using testing::unary;

TEST(Elementwise, F32Arithmetic) {
  EXPECT_EQ(binary("add", "f32", "{1, 2.5, -3, 0.1}", "{2, 0.25, 3, 0.2}"),
            (V{3, 2.75, 0, static_cast<double>(0.1f + 0.2f)}));
  EXPECT_EQ(binary("subtract", "f32", "{1, 2, 3, 4}", "{4, 3, 2, 1}"), (V{-3, -1, 1, 3}));
  EXPECT_EQ(binary("multiply", "f32", "{1.5, -2, 3, 0}", "{2, 2, -3, 5}"), (V{3, -4, -9, 0}));
  EXPECT_EQ(binary("divide", "f32", "{1, 3, -8, 1}", "{4, 2, 2, 3}"),
            (V{0.25, 1.5, -4, static_cast<double>(1.0f / 3.0f)}));
  EXPECT_EQ(binary("maximum", "f32", "{1, -2, 3, 0}", "{0, -1, 5, 0}"), (V{1, -1, 5, 0}));
  EXPECT_EQ(binary("minimum", "f32", "{1, -2, 3, 0}", "{0, -1, 5, 0}"), (V{0, -2, 3, 0}));
  EXPECT_EQ(binary("remainder", "f32", "{7, -7, 7.5, 1}", "{3, 3, 2, 1}"), (V{1, -1, 1.5, 0}));
  EXPECT_EQ(unary("negate", "f32", "{1, -2, 0, 3.5}"), (V{-1, 2, -0.0, -3.5}));
  EXPECT_EQ(unary("abs", "f32", "{1, -2, 0, -3.5}"), (V{1, 2, 0, 3.5}));
  V e = unary("exponential", "f32", "{0, 1, -1, 2}");
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0], 1.0);
  EXPECT_EQ(e[1], static_cast<double>(std::exp(1.0f)));
  EXPECT_EQ(e[3], static_cast<double>(std::exp(2.0f)));
}

TEST(Elementwise, MaxMinPropagateNaN) {
  V m = binary("maximum", "f32", "{nan, 1, 2, 3}", "{1, nan, 0, 3}");
  ASSERT_EQ(m.size(), 4u);
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_TRUE(std::isnan(m[1]));
  EXPECT_EQ(m[2], 2);
}

TEST(Elementwise, Bf16RoundsAfterEveryOp) {
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even -> 1.
  EXPECT_EQ(binary("add", "bf16", "{1, 1, 256, 3}", "{0.00390625, 0.01171875, 1, 0.1}"),
            (V{1, 1.015625, 256, 3.09375}));
  // 1/3 in bf16 = 0.333984375
  EXPECT_EQ(binary("divide", "bf16", "{1, 2, 1, 1}", "{3, 3, 1, 1}"), (V{0.333984375, 0.66796875, 1, 1}));
  EXPECT_EQ(binary("multiply", "f16", "{1000, 300, 1, 1}", "{100, 200, 1, 1}"),
            (V{std::numeric_limits<double>::infinity(), 60000, 1, 1}));
}

TEST(Elementwise, IntegersWrap) {
  EXPECT_EQ(binary("add", "s8", "{127, -128, 100, 1}", "{1, -1, 100, 1}"), (V{-128, 127, -56, 2}));
  EXPECT_EQ(binary("multiply", "s32", "{65536, 3, -4, 7}", "{65536, 5, 6, -1}"), (V{0, 15, -24, -7}));
  EXPECT_EQ(binary("subtract", "u32", "{0, 5, 4294967295, 1}", "{1, 3, 4294967295, 0}"),
            (V{4294967295.0, 2, 0, 1}));
  EXPECT_EQ(unary("negate", "s8", "{-128, 5, 0, 127}"), (V{-128, -5, 0, -127}));
  EXPECT_EQ(unary("abs", "s32", "{-2147483648, -5, 0, 7}"), (V{-2147483648.0, 5, 0, 7}));
  EXPECT_EQ(binary("add", "s64", "{9007199254740992, -5, 1, 2}", "{2, 5, -1, 2}"),
            (V{9007199254740994.0, 0, 0, 4}));
}

TEST(Elementwise, IntegerDivisionFollowsXla) {
  // Truncation toward zero; x/0 = -1; INT_MIN/-1 = INT_MIN.
  EXPECT_EQ(binary("divide", "s32", "{7, -7, 5, -2147483648}", "{2, 2, 0, -1}"), (V{3, -3, -1, -2147483648.0}));
  EXPECT_EQ(binary("divide", "u32", "{7, 9, 5, 1}", "{2, 3, 0, 1}"), (V{3, 3, 4294967295.0, 1}));
  EXPECT_EQ(binary("divide", "s8", "{-128, 100, -9, 0}", "{-1, 0, 4, 3}"), (V{-128, -1, -2, 0}));
  // Remainder has the dividend's sign; x%0 = x; INT_MIN % -1 = 0.
  EXPECT_EQ(binary("remainder", "s32", "{7, -7, 5, -2147483648}", "{3, 3, 0, -1}"), (V{1, -1, 5, 0}));
  EXPECT_EQ(binary("remainder", "u32", "{7, 9, 5, 4294967295}", "{3, 3, 0, 2}"), (V{1, 0, 5, 1}));
}

TEST(Elementwise, AndOr) {
  EXPECT_EQ(binary("and", "pred", "{true, true, false, false}", "{true, false, true, false}"), (V{1, 0, 0, 0}));
  EXPECT_EQ(binary("or", "pred", "{true, true, false, false}", "{true, false, true, false}"), (V{1, 1, 1, 0}));
  EXPECT_EQ(binary("and", "s32", "{12, -1, 5, 0}", "{10, 7, 3, 9}"), (V{8, 7, 1, 0}));
  EXPECT_EQ(binary("or", "u32", "{12, 1, 5, 0}", "{10, 2, 3, 9}"), (V{14, 3, 7, 9}));
}

TEST(Elementwise, CompareDirections) {
  auto cmp = [](const std::string& dir, const std::string& t, const std::string& a, const std::string& b) {
    return values_of(run_hlo(entry("  a = " + t + "[4] constant(" + a + ")\n  b = " + t + "[4] constant(" + b +
                                   ")\n  ROOT r = pred[4] compare(a, b), direction=" + dir)));
  };
  EXPECT_EQ(cmp("EQ", "f32", "{1, 2, 3, nan}", "{1, 3, 2, nan}"), (V{1, 0, 0, 0}));
  EXPECT_EQ(cmp("NE", "f32", "{1, 2, 3, nan}", "{1, 3, 2, nan}"), (V{0, 1, 1, 1}));
  EXPECT_EQ(cmp("LT", "s32", "{1, 2, 3, -4}", "{1, 3, 2, 4}"), (V{0, 1, 0, 1}));
  EXPECT_EQ(cmp("LE", "s32", "{1, 2, 3, -4}", "{1, 3, 2, 4}"), (V{1, 1, 0, 1}));
  EXPECT_EQ(cmp("GT", "u32", "{1, 2, 4294967295, 0}", "{1, 3, 2, 4}"), (V{0, 0, 1, 0}));
  EXPECT_EQ(cmp("GE", "bf16", "{1, 2, 3, -4}", "{1, 3, 2, 4}"), (V{1, 0, 1, 0}));
}

TEST(Elementwise, Select) {
  auto r = run_hlo(entry(
      "  p = pred[4] constant({true, false, true, false})\n  a = s32[4] constant({1, 2, 3, 4})\n"
      "  b = s32[4] constant({-1, -2, -3, -4})\n  ROOT r = s32[4] select(p, a, b)"));
  EXPECT_EQ(values_of(r), (V{1, -2, 3, -4}));
}

TEST(Elementwise, Convert) {
  auto conv = [](const std::string& from, const std::string& to, const std::string& a) {
    return values_of(run_hlo(entry("  a = " + from + "[4] constant(" + a + ")\n  ROOT r = " + to + "[4] convert(a)")));
  };
  // float -> int truncates and saturates; NaN -> 0.
  EXPECT_EQ(conv("f32", "s32", "{1.9, -1.9, 3e10, nan}"), (V{1, -1, 2147483647.0, 0}));
  EXPECT_EQ(conv("f32", "s8", "{200, -200, 5.5, -0.5}"), (V{127, -128, 5, 0}));
  EXPECT_EQ(conv("f32", "u32", "{-3, 4.7, 1e10, 0}"), (V{0, 4, 4294967295.0, 0}));
  // int -> int wraps.
  EXPECT_EQ(conv("s32", "s8", "{200, -129, 5, 256}"), (V{-56, 127, 5, 0}));
  EXPECT_EQ(conv("s32", "u32", "{-1, 5, 0, -2}"), (V{4294967295.0, 5, 0, 4294967294.0}));
  // -> bf16 rounds to nearest even; -> pred is != 0.
  EXPECT_EQ(conv("f32", "bf16", "{1.00390625, 1.01171875, 3.14159, 100000}"), (V{1, 1.015625, 3.140625, 99840}));
  EXPECT_EQ(conv("f32", "pred", "{0, -0.5, 2, 0}"), (V{0, 1, 1, 0}));
  EXPECT_EQ(conv("pred", "f32", "{true, false, true, true}"), (V{1, 0, 1, 1}));
  EXPECT_EQ(conv("s64", "f64", "{-5, 7, 0, 1}"), (V{-5, 7, 0, 1}));
}

}  // namespace
}  // namespace sl::exec
