// Literal <-> device bytes: runs without a GPU (pure host code).
#include <gtest/gtest.h>

#include <cmath>

#include "core/exec/cuda/host_convert.h"

namespace sl::exec::cuda {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;

TEST(HostConvert, RoundTripsEveryArrayType) {
  const std::vector<double> values = {-5, -1.5, 0, 0.25, 3, 1000.75};
  for (PrimitiveType t : {PrimitiveType::kPred, PrimitiveType::kS8, PrimitiveType::kS32, PrimitiveType::kU32,
                          PrimitiveType::kS64, PrimitiveType::kF16, PrimitiveType::kBF16, PrimitiveType::kF32,
                          PrimitiveType::kF64}) {
    Literal in{Shape::array(t, {2, 3}), values};
    auto bytes = encode_literal(in);
    ASSERT_EQ(bytes.size(), static_cast<size_t>(6 * hlo::primitive_type_bytes(t))) << hlo::primitive_type_name(t);
    Literal out = decode_literal(in.shape, bytes.data());
    ASSERT_EQ(out.values.size(), values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(out.values[i], round_to_type(values[i], t)) << hlo::primitive_type_name(t) << " element " << i;
    }
  }
}

TEST(HostConvert, Bf16BitsAreRowMajorRoundToNearestEven) {
  // 1 + 2^-8 is halfway between two bf16 values: ties to even gives 1.0.
  Literal in{Shape::array(PrimitiveType::kBF16, {2}), {1.0 + std::ldexp(1.0, -8), -2.0}};
  auto bytes = encode_literal(in);
  ASSERT_EQ(bytes.size(), 4u);
  EXPECT_EQ(bytes[0] | (bytes[1] << 8), 0x3F80);  // 1.0
  EXPECT_EQ(bytes[2] | (bytes[3] << 8), 0xC000);  // -2.0
}

TEST(HostConvert, ScalarLiteralFillsTheArray) {
  Literal in{Shape::array(PrimitiveType::kS32, {3}), {7}};
  auto bytes = encode_literal(in);
  Literal out = decode_literal(in.shape, bytes.data());
  EXPECT_EQ(out.values, (std::vector<double>{7, 7, 7}));
}

}  // namespace
}  // namespace sl::exec::cuda
