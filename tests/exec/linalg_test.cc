// cholesky and triangular-solve against small systems solved by hand; the
// triangle an op must not read holds 99.

#include <gtest/gtest.h>

#include <cmath>

#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using testing::entry;
using testing::run_hlo;
using testing::values_of;

using V = std::vector<double>;

TEST(Linalg, CholeskyReadsOneTriangle) {
  // [[4,2],[2,5]] = L L^T with L = [[2,0],[1,2]].
  EXPECT_EQ(values_of(run_hlo(entry("  a = f32[2,2] constant({{4, 99}, {2, 5}})\n"
                                    "  ROOT l = f32[2,2] cholesky(a), lower=true"))),
            (V{2, 0, 1, 2}));
  EXPECT_EQ(values_of(run_hlo(entry("  a = f32[1,2,2] constant({{{4, 2}, {99, 5}}})\n"
                                    "  ROOT u = f32[1,2,2] cholesky(a), lower=false"))),
            (V{2, 1, 0, 2}));
  const V bad = values_of(run_hlo(entry("  a = f32[1,1] constant({{-1}})\n  ROOT l = f32[1,1] cholesky(a), lower=true")));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_TRUE(std::isnan(bad[0])) << "not positive definite";
}

std::string solve(const std::string& b_shape, const std::string& b, const std::string& attrs,
                  const std::string& a = "{{2, 99}, {1, 4}}") {
  return entry("  a = f32[2,2] constant(" + a + ")\n  b = " + b_shape + " constant(" + b + ")\n  ROOT x = " + b_shape +
               " triangular-solve(a, b), " + attrs);
}

TEST(Linalg, TriangularSolveSidesAndTransposes) {
  // [[2,0],[1,4]] x = [2,9]: x = [1, 2].
  EXPECT_EQ(values_of(run_hlo(solve("f32[2,1]", "{{2}, {9}}", "left_side=true, lower=true, transpose_a=NO_TRANSPOSE"))),
            (V{1, 2}));
  // [[2,1],[0,4]] x = [2,9]: x1 = 9/4, x0 = (2 - 9/4) / 2.
  EXPECT_EQ(values_of(run_hlo(solve("f32[2,1]", "{{2}, {9}}", "left_side=true, lower=true, transpose_a=TRANSPOSE"))),
            (V{-0.125, 2.25}));
  // x [[2,0],[1,4]] = [2,8]: 4 x1 = 8, 2 x0 + x1 = 2.
  EXPECT_EQ(values_of(run_hlo(solve("f32[1,2]", "{{2, 8}}", "lower=true, transpose_a=NO_TRANSPOSE"))), (V{0, 2}));
  // Unit diagonal: [[1,0],[3,1]] x = [1,5].
  EXPECT_EQ(values_of(run_hlo(solve("f32[2,1]", "{{1}, {5}}", "left_side=true, lower=true, unit_diagonal=true",
                                    "{{7, 99}, {3, 7}}"))),
            (V{1, 2}));
}

}  // namespace
}  // namespace sl::exec
