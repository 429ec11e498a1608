// convolution against sums worked out by hand: a 1-D window with strides,
// padding, base (lhs) dilation and window reversal, a 0-D (dot-like) form
// as XLA's ConvolveR2 writes it, and feature groups.

#include <gtest/gtest.h>

#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using testing::entry;
using testing::run_hlo;
using testing::values_of;

using V = std::vector<double>;

std::string conv1d(const std::string& out, const std::string& window) {
  return entry("  x = f32[1,4,1] constant({{{1}, {2}, {3}, {4}}})\n"
               "  k = f32[2,1,1] constant({{{1}}, {{10}}})\n"
               "  ROOT c = " + out + " convolution(x, k), window={" + window + "}, dim_labels=b0f_0io->b0f");
}

TEST(Convolution, OneDimensionalWindow) {
  // out[o] = x[o] * 1 + x[o + 1] * 10.
  EXPECT_EQ(values_of(run_hlo(conv1d("f32[1,3,1]", "size=2"))), (V{21, 32, 43}));
  // Padded {0,1,2,3,4,0}, every second window.
  EXPECT_EQ(values_of(run_hlo(conv1d("f32[1,3,1]", "size=2 stride=2 pad=1_1"))), (V{10, 32, 4}));
  // Base dilation 2: {1,0,2,0,3,0,4}.
  EXPECT_EQ(values_of(run_hlo(conv1d("f32[1,6,1]", "size=2 lhs_dilate=2"))), (V{1, 20, 2, 30, 3, 40}));
  // Window dilation 2: x[o] + 10 x[o + 2].
  EXPECT_EQ(values_of(run_hlo(conv1d("f32[1,2,1]", "size=2 rhs_dilate=2"))), (V{31, 42}));
  // Reversed kernel {10, 1}.
  EXPECT_EQ(values_of(run_hlo(conv1d("f32[1,3,1]", "size=2 rhs_reversal=1"))), (V{12, 23, 34}));
}

TEST(Convolution, NoSpatialDimensionsIsAProductWithTheKernel) {
  auto ran = run_hlo(entry(R"(  x = f32[1,2] constant({{1, 2}})
  k = f32[2,2] constant({{1, 2}, {3, 4}})
  ROOT c = f32[1,2] convolution(x, k), dim_labels=bf_io->bf)"));
  EXPECT_EQ(values_of(ran), (V{7, 10}));  // {1*1 + 2*3, 1*2 + 2*4}
}

TEST(Convolution, FeatureGroupsSeeOnlyTheirInputs) {
  auto ran = run_hlo(entry(R"(  x = f32[1,2] constant({{1, 2}})
  k = f32[1,2] constant({{5, 7}})
  ROOT c = f32[1,2] convolution(x, k), dim_labels=bf_io->bf, feature_group_count=2)"));
  EXPECT_EQ(values_of(ran), (V{5, 14}));  // output 0 from input 0, output 1 from input 1
}

}  // namespace
}  // namespace sl::exec
