// The cuBLAS GEMM custom-calls: alpha, beta (scaling the C operand) and the
// cuBLASLt epilogues, in the operand order XLA's GEMM rewriter emits.

#include <gtest/gtest.h>

#include <cmath>

#include "tests/exec/cpu_test_util.h"

namespace sl::exec {
namespace {

using testing::run_hlo;
using testing::values_of;

using V = std::vector<double>;

// a = [[1,2,3],[4,5,6]] times b = [[1,-1],[0,1],[1,-3]]: [[4,-8],[10,-17]].
std::string lt_program(const std::string& epilogue, double alpha, double beta, const std::string& extra_operands,
                       const std::string& extra_lines, const std::string& result = "(f32[2,2], s8[64])") {
  return "HloModule t\nENTRY main {\n"
         "  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
         "  b = f32[3,2] constant({{1, -1}, {0, 1}, {1, -3}})\n" +
         extra_lines + "  g = " + result + " custom-call(a, b" + extra_operands +
         "), custom_call_target=\"__cublas$lt$matmul\", backend_config={\"gemm_backend_config\":{\"alpha_real\":" +
         std::to_string(alpha) + ",\"beta\":" + std::to_string(beta) + ",\"epilogue\":\"" + epilogue +
         "\",\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"0\"],"
         "\"lhs_batch_dimensions\":[],\"rhs_batch_dimensions\":[]}}}\n"
         "  ROOT o = f32[2,2] get-tuple-element(g), index=0\n}\n";
}

TEST(Gemm, LtMatmulDefault) {
  EXPECT_EQ(values_of(run_hlo(lt_program("DEFAULT", 1, 0, "", ""))), (V{4, -8, 10, -17}));
}

TEST(Gemm, AlphaAndBetaScaleTheProductAndC) {
  // 2 * ab + 0.5 * c with c = [[2,4],[6,8]].
  EXPECT_EQ(values_of(run_hlo(lt_program("DEFAULT", 2, 0.5, ", c", "  c = f32[2,2] constant({{2, 4}, {6, 8}})\n"))),
            (V{9, -14, 23, -30}));
}

TEST(Gemm, Epilogues) {
  EXPECT_EQ(values_of(run_hlo(lt_program("RELU", 1, 0, "", ""))), (V{4, 0, 10, 0}));
  // The bias vector adds along the columns: [1, 20].
  const std::string bias = "  bias = f32[2] constant({1, 20})\n";
  EXPECT_EQ(values_of(run_hlo(lt_program("BIAS", 1, 0, ", bias", bias))), (V{5, 12, 11, 3}));
  EXPECT_EQ(values_of(run_hlo(lt_program("BIAS_RELU", 1, 0, ", bias", bias))), (V{5, 12, 11, 3}));
  const std::string neg = "  bias = f32[2] constant({-5, 0})\n";
  EXPECT_EQ(values_of(run_hlo(lt_program("BIAS_RELU", 1, 0, ", bias", neg))), (V{0, 0, 5, 0}));
  // C first, then the bias: 1*ab + 1*c + bias.
  EXPECT_EQ(values_of(run_hlo(lt_program("BIAS", 1, 1, ", c, bias",
                                         "  c = f32[2,2] constant({{1, 1}, {1, 1}})\n" + bias))),
            (V{6, 13, 12, 4}));
}

double gelu(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

TEST(Gemm, GeluAuxKeepsThePreActivation) {
  std::string text = lt_program("GELU_AUX", 1, 0, "", "", "(f32[2,2], f32[2,2], s8[64])");
  auto r = run_hlo(text.replace(text.find("ROOT o = f32[2,2] get-tuple-element(g), index=0"),
                                std::string("ROOT o = f32[2,2] get-tuple-element(g), index=0").size(),
                                "d = f32[2,2] get-tuple-element(g), index=0\n"
                                "  aux = f32[2,2] get-tuple-element(g), index=1\n"
                                "  ROOT o = (f32[2,2], f32[2,2]) tuple(d, aux)"));
  V d = values_of(r, 0, 0);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0], static_cast<double>(static_cast<float>(gelu(4))));
  EXPECT_EQ(d[1], static_cast<double>(static_cast<float>(gelu(-8))));
  EXPECT_EQ(values_of(r, 0, 1), (V{4, -8, 10, -17}));
}

TEST(Gemm, OtherCustomCallsAreRefusedWithTheirTarget) {
  auto r = run_hlo("HloModule t\nENTRY main {\n  x = f32[4] parameter(0)\n"
                   "  ROOT c = f32[4] custom-call(x), custom_call_target=\"__cudnn$convForward\"\n}\n");
  ASSERT_FALSE(r.status.is_ok());
  EXPECT_NE(r.status.message().find("__cudnn$convForward"), std::string::npos) << r.status.message();
  EXPECT_NE(r.status.message().find("test.hlo:4:"), std::string::npos) << r.status.message();
}

}  // namespace
}  // namespace sl::exec
