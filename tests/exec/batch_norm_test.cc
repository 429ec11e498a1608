// batch-norm-inference, -training and -grad against values worked out by
// hand from the formulas of XLA's operation reference; the training case is
// XLA's own BatchNormTrainingTest.BasicTraining (batch_normalization_test.cc:
// expected output {{-1.6,-2.0},{0.1,0.6}},{{1.9,3.3},{3.7,6.0}} within 0.1,
// mean {4,5}, variance {5,5}), here to 1e-5 from the exact formula.

#include <gtest/gtest.h>

#include <cmath>

#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using testing::entry;
using testing::run_hlo;
using testing::values_of;

using V = std::vector<double>;

void expect_near(const V& got, const V& want, double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(BatchNorm, InferenceNormalisesPerFeature) {
  auto ran = run_hlo(entry(R"(  x = f32[2,2] constant({{1, 2}, {3, 4}})
  scale = f32[2] constant({1, 2})
  offset = f32[2] constant({0, 1})
  mean = f32[2] constant({2, 3})
  var = f32[2] constant({1, 4})
  ROOT y = f32[2,2] batch-norm-inference(x, scale, offset, mean, var), epsilon=0, feature_index=1)"));
  // (x - mean) / sqrt(var) * scale + offset, feature = column.
  EXPECT_EQ(values_of(ran), (V{-1, 0, 1, 2}));
}

TEST(BatchNorm, TrainingIsXlasBasicTraining) {
  auto ran = run_hlo(entry(R"(  x = f32[2,2,1,2] constant({{{{1, 2}}, {{3, 4}}}, {{{5, 6}}, {{7, 8}}}})
  scale = f32[2] constant({2, 3})
  offset = f32[2] constant({1, 2})
  ROOT t = (f32[2,2,1,2], f32[2], f32[2]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=3)"));
  // Feature 0 holds 1,3,5,7 (mean 4, variance 5); feature 1 holds 2,4,6,8 (5, 5).
  const double s = std::sqrt(5.0 + static_cast<double>(0.001f));
  expect_near(values_of(ran, 0, 0), V{2 * -3 / s + 1, 3 * -3 / s + 2, 2 * -1 / s + 1, 3 * -1 / s + 2,
                                      2 * 1 / s + 1, 3 * 1 / s + 2, 2 * 3 / s + 1, 3 * 3 / s + 2});
  const V xla = {-1.6, -2.0, 0.1, 0.6, 1.9, 3.3, 3.7, 6.0};
  expect_near(values_of(ran, 0, 0), xla, 0.1);
  EXPECT_EQ(values_of(ran, 0, 1), (V{4, 5}));
  EXPECT_EQ(values_of(ran, 0, 2), (V{5, 5}));
}

TEST(BatchNorm, GradOfOneFeature) {
  auto ran = run_hlo(entry(R"(  x = f32[3,1] constant({{0}, {1}, {5}})
  scale = f32[1] constant({4})
  mean = f32[1] constant({1})
  var = f32[1] constant({3})
  dy = f32[3,1] constant({{1}, {2}, {3}})
  ROOT g = (f32[3,1], f32[1], f32[1]) batch-norm-grad(x, scale, mean, var, dy), epsilon=1, feature_index=1)"));
  // sqrt(var + eps) = 2; x - mean = {-1, 0, 4}; sum(dy) = 6; sum(dy (x - mean)) = 11.
  // dx = 4/2 * (dy - 6/3 - (x - mean) * 11 / (3 * 4)).
  expect_near(values_of(ran, 0, 0), V{-1.0 / 6.0, 0.0, 2 * (1 - 44.0 / 12.0)});
  expect_near(values_of(ran, 0, 1), V{5.5});
  EXPECT_EQ(values_of(ran, 0, 2), (V{6}));
}

}  // namespace
}  // namespace sl::exec
