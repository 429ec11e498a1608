// scan against values worked out by hand: a running sum (JAX's cumsum), a
// reversed scan, and a body whose output differs from its carry.

#include <gtest/gtest.h>

#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using testing::run_hlo;
using testing::shape_of;
using testing::values_of;

using V = std::vector<double>;

// f(x, carry) = (x + carry, x + carry): a running sum.
constexpr const char* kSum = R"(
add {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  s = f32[] add(x, c)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
)";

TEST(Scan, RunningSumForwardAndReverse) {
  const std::string head = std::string("HloModule t\n") + kSum;
  auto forward = run_hlo(head + R"(
ENTRY main {
  in = f32[4] constant({1, 2, 3, 4})
  init = f32[] constant(10)
  ROOT s = (f32[4], f32[]) scan(in, init), dimensions={0}, num_carries=1, to_apply=add
})");
  EXPECT_EQ(values_of(forward, 0, 0), (V{11, 13, 16, 20}));
  EXPECT_EQ(values_of(forward, 0, 1), (V{20}));
  auto reverse = run_hlo(head + R"(
ENTRY main {
  in = f32[4] constant({1, 2, 3, 4})
  init = f32[] constant(0)
  ROOT s = (f32[4], f32[]) scan(in, init), dimensions={0}, num_carries=1, is_reverse=true, to_apply=add
})");
  EXPECT_EQ(values_of(reverse, 0, 0), (V{10, 9, 7, 4}));
  EXPECT_EQ(values_of(reverse, 0, 1), (V{10}));
}

// Inputs come first, carries last, in both the parameters and the results:
// f(x, c) = (x * c, c + 1) over dimension 1 of a [2,3] input, with a [2] carry.
TEST(Scan, OutputsBeforeCarriesAlongAnInnerDimension) {
  auto ran = run_hlo(R"(HloModule t
step {
  x = f32[2] parameter(0)
  c = f32[2] parameter(1)
  y = f32[2] multiply(x, c)
  one = f32[] constant(1)
  ones = f32[2] broadcast(one), dimensions={}
  n = f32[2] add(c, ones)
  ROOT t = (f32[2], f32[2]) tuple(y, n)
}
ENTRY main {
  in = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  init = f32[2] constant({1, 10})
  ROOT s = (f32[2,3], f32[2]) scan(in, init), dimensions={1}, num_carries=1, to_apply=step
})");
  // Row 0: carries 1, 2, 3 -> 1*1, 2*2, 3*3; row 1: 10, 11, 12 -> 40, 55, 72.
  EXPECT_EQ(values_of(ran, 0, 0), (V{1, 4, 9, 40, 55, 72}));
  EXPECT_EQ(shape_of(ran, 0, 0), "f32[2,3]");
  EXPECT_EQ(values_of(ran, 0, 1), (V{4, 13}));
}

}  // namespace
}  // namespace sl::exec
