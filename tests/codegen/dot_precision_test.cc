// XLA's TF32 choice for f32 GEMMs (core/sched/dot_precision.h): dots
// and cuBLAS custom-calls with DEFAULT/HIGH precision use TF32, HIGHEST and
// an f32 algorithm do not, a TF32 algorithm does whatever the precision.

#include <gtest/gtest.h>

#include <string>

#include "core/hlo/parser.h"
#include "core/sched/dot_precision.h"

namespace sl::sched {
namespace {

// Whether XLA would use TF32 for the entry's instruction `name` of a module
// whose entry is `body` over f32[16,16] parameters x and y.
bool tf32(const std::string& body, const std::string& name) {
  const std::string text = "HloModule m\nENTRY e {\n  x = f32[16,16] parameter(0)\n  y = f32[16,16] parameter(1)\n" +
                           body + "\n}\n";
  auto module = hlo::parse_program(text, "test.hlo");
  EXPECT_TRUE(module.is_ok()) << module.status().message();
  if (!module.is_ok()) return false;
  for (const hlo::Instruction& inst : module->entry_computation().instructions) {
    if (inst.name == name) return xla_allows_tf32(inst);
  }
  ADD_FAILURE() << "no " << name;
  return false;
}

std::string dot(const std::string& attributes) {
  return "  ROOT d = f32[16,16] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}" + attributes;
}

std::string cublas(const std::string& precision_config) {
  return R"(  g = (f32[16,16], s8[1024]) custom-call(x, y), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]})" +
         precision_config + R"(}}
  ROOT r = f32[16,16] get-tuple-element(g), index=0)";
}

TEST(DotPrecision, DotsFollowOperandPrecision) {
  EXPECT_TRUE(tf32(dot(""), "d"));
  EXPECT_TRUE(tf32(dot(", operand_precision={default,high}"), "d"));
  EXPECT_FALSE(tf32(dot(", operand_precision={highest,default}"), "d"));
  EXPECT_FALSE(tf32(dot(", operand_precision={default,highest}"), "d"));
}

TEST(DotPrecision, AnAlgorithmDecidesOverThePrecision) {
  EXPECT_FALSE(tf32(dot(", algorithm=dot_f32_f32_f32"), "d"));
  EXPECT_TRUE(tf32(dot(", operand_precision={highest,highest}, algorithm=dot_tf32_tf32_f32"), "d"));
}

TEST(DotPrecision, CublasCustomCallsReadTheirPrecisionConfig) {
  EXPECT_TRUE(tf32(cublas(""), "g"));
  EXPECT_TRUE(tf32(cublas(R"(,"precision_config":{"algorithm":"ALG_UNSET","operand_precision":["DEFAULT","DEFAULT"]})"), "g"));
  EXPECT_FALSE(tf32(cublas(R"(,"precision_config":{"algorithm":"ALG_UNSET","operand_precision":["HIGHEST","HIGHEST"]})"), "g"));
  EXPECT_FALSE(tf32(cublas(R"(,"precision_config":{"algorithm":"ALG_DOT_F32_F32_F32","operand_precision":["DEFAULT","DEFAULT"]})"), "g"));
  EXPECT_TRUE(tf32(cublas(R"(,"precision_config":{"algorithm":"ALG_DOT_TF32_TF32_F32","operand_precision":["HIGHEST","HIGHEST"]})"), "g"));
}

}  // namespace
}  // namespace sl::sched
