#include "core/exec/literal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sl::exec {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;

TEST(RoundToType, Bf16RoundsToNearestEven) {
  // bf16 has 8 significant bits: between 1 and 2 the step is 1/128.
  EXPECT_EQ(round_to_type(1.0 + 1.0 / 256, PrimitiveType::kBF16), 1.0);                // tie -> even (1.0)
  EXPECT_EQ(round_to_type(1.0 + 3.0 / 256, PrimitiveType::kBF16), 1.0 + 2.0 / 128);    // tie -> even (up)
  EXPECT_EQ(round_to_type(1.0 + 1.0 / 256 + 1e-6, PrimitiveType::kBF16), 1.0 + 1.0 / 128);
  EXPECT_EQ(round_to_type(3.14159265, PrimitiveType::kBF16), 3.140625);
  EXPECT_EQ(round_to_type(-3.14159265, PrimitiveType::kBF16), -3.140625);
  EXPECT_EQ(round_to_type(257.0, PrimitiveType::kBF16), 256.0);
  EXPECT_TRUE(std::isinf(round_to_type(3.4e38, PrimitiveType::kBF16)));
  EXPECT_TRUE(std::isnan(round_to_type(std::nan(""), PrimitiveType::kBF16)));
}

TEST(RoundToType, F16RoundsAndOverflows) {
  EXPECT_EQ(round_to_type(1.0 + 1.0 / 2048, PrimitiveType::kF16), 1.0);   // tie -> even
  EXPECT_EQ(round_to_type(1.0 + 3.0 / 2048, PrimitiveType::kF16), 1.0 + 2.0 / 1024);
  EXPECT_EQ(round_to_type(65504.0, PrimitiveType::kF16), 65504.0);
  EXPECT_EQ(round_to_type(65519.0, PrimitiveType::kF16), 65504.0);
  EXPECT_TRUE(std::isinf(round_to_type(65520.0, PrimitiveType::kF16)));
  // Subnormals: the smallest is 2^-24; half of it ties to zero (even).
  EXPECT_EQ(round_to_type(std::ldexp(1.0, -24), PrimitiveType::kF16), std::ldexp(1.0, -24));
  EXPECT_EQ(round_to_type(std::ldexp(1.0, -25), PrimitiveType::kF16), 0.0);
  EXPECT_EQ(round_to_type(std::ldexp(3.0, -25), PrimitiveType::kF16), std::ldexp(2.0, -24));
}

TEST(RoundToType, F32AndF64) {
  EXPECT_EQ(round_to_type(0.1, PrimitiveType::kF32), static_cast<double>(0.1f));
  EXPECT_EQ(round_to_type(0.1, PrimitiveType::kF64), 0.1);
}

TEST(RoundToType, IntegersWrap) {
  EXPECT_EQ(round_to_type(128, PrimitiveType::kS8), -128);
  EXPECT_EQ(round_to_type(-129, PrimitiveType::kS8), 127);
  EXPECT_EQ(round_to_type(300, PrimitiveType::kS8), 44);
  EXPECT_EQ(round_to_type(2147483648.0, PrimitiveType::kS32), -2147483648.0);
  EXPECT_EQ(round_to_type(-1, PrimitiveType::kU32), 4294967295.0);
  EXPECT_EQ(round_to_type(4294967296.0 + 5, PrimitiveType::kU32), 5);
  EXPECT_EQ(round_to_type(9223372036854775808.0, PrimitiveType::kS64), -9223372036854775808.0);
  EXPECT_EQ(round_to_type(-7.9, PrimitiveType::kS32), -7);
}

TEST(RoundToType, Pred) {
  EXPECT_EQ(round_to_type(0, PrimitiveType::kPred), 0);
  EXPECT_EQ(round_to_type(-3, PrimitiveType::kPred), 1);
  EXPECT_EQ(round_to_type(0.5, PrimitiveType::kPred), 1);
}

TEST(RampLiteral, FollowsTheFormula) {
  // ((g*7 + p*3 + i) mod 11) - 5
  Literal l = ramp_literal(Shape::array(PrimitiveType::kF32, {2, 3}), 1, 2);
  ASSERT_EQ(l.values.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(l.values[i], ((7 + 6 + i) % 11) - 5) << i;
  EXPECT_EQ(l.values[0], -3);
  EXPECT_EQ(l.values[5], 2);  // (18 mod 11) - 5
}

TEST(RampLiteral, TypesAndPred) {
  Literal u = ramp_literal(Shape::array(PrimitiveType::kU32, {1}), 0, 0);
  EXPECT_EQ(u.values[0], 4294967291.0);  // -5 wraps
  Literal p = ramp_literal(Shape::array(PrimitiveType::kPred, {4}), 0, 0);
  // values -5 -4 -3 -2: odd -> true
  EXPECT_EQ(p.values, (std::vector<double>{1, 0, 1, 0}));
  Literal big = ramp_literal(Shape::array(PrimitiveType::kS32, {30}), 3, 1);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(big.values[i], ((21 + 3 + i) % 11) - 5);
}

TEST(RandomLiteral, DeterministicInRangeAndDistinct) {
  Shape s = Shape::array(PrimitiveType::kF32, {1000});
  Literal a = random_literal(s, 42, 0, 0);
  Literal b = random_literal(s, 42, 0, 0);
  EXPECT_EQ(a.values, b.values);
  EXPECT_NE(a.values, random_literal(s, 43, 0, 0).values);
  EXPECT_NE(a.values, random_literal(s, 42, 1, 0).values);
  EXPECT_NE(a.values, random_literal(s, 42, 0, 1).values);
  double lo = 1, hi = -1, sum = 0;
  for (double v : a.values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    EXPECT_EQ(v, static_cast<double>(static_cast<float>(v)));
  }
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, -0.9);
  EXPECT_GT(hi, 0.9);
  EXPECT_NEAR(sum / 1000, 0.0, 0.1);
  for (double v : random_literal(Shape::array(PrimitiveType::kBF16, {500}), 7, 0, 0).values) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
    EXPECT_EQ(v, round_to_type(v, PrimitiveType::kBF16));
  }
}

}  // namespace
}  // namespace sl::exec
