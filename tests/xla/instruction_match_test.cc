// Instructions of two compilations matched by the work they do
// (core/xla/instruction_match.h), not by XLA's numbering.

#include "core/xla/instruction_match.h"

#include <gtest/gtest.h>

#include <string>

#include "core/hlo/parser.h"

namespace sl::xla {
namespace {

hlo::Module parse(const std::string& text) {
  auto m = hlo::parse_program(text, "match.hlo");
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return m.is_ok() ? std::move(*m) : hlo::Module{};
}

// Two GEMMs and a fusion; `NAMES` orders the GEMMs' numbers.
std::string program(const std::string& first_gemm, const std::string& second_gemm, const std::string& op) {
  return R"(HloModule m, is_scheduled=true
%fused (p: f32[64,256]) -> f32[64,256] {
  %p = f32[64,256]{1,0} parameter(0)
  ROOT %e = f32[64,256]{1,0} )" + op + R"((%p)
}
ENTRY %main (a: f32[64,128], b: f32[128,256], c: f32[256,32]) -> f32[64,32] {
  %a = f32[64,128]{1,0} parameter(0)
  %b = f32[128,256]{1,0} parameter(1)
  %c = f32[256,32]{1,0} parameter(2)
  %)" + first_gemm + R"( = f32[64,256]{1,0} custom-call(%a, %b), custom_call_target="__cublas$gemm"
  %loop_fusion = f32[64,256]{1,0} fusion(%)" + first_gemm + R"(), kind=kLoop, calls=%fused
  ROOT %)" + second_gemm + R"( = f32[64,32]{1,0} custom-call(%loop_fusion, %c), custom_call_target="__cublas$gemm"
}
)";
}

TEST(InstructionMatch, RenumberedInstructionsAreMatchedByTheirWork) {
  const hlo::Module before = parse(program("custom-call.0", "custom-call.1", "exponential"));
  const hlo::Module after = parse(program("custom-call.1", "custom-call.0", "exponential"));
  const auto match = match_by_content(instruction_fingerprints(after), instruction_fingerprints(before));
  EXPECT_EQ(match.at("custom-call.1"), "custom-call.0");  // the [64,128] x [128,256] GEMM
  EXPECT_EQ(match.at("custom-call.0"), "custom-call.1");
  EXPECT_EQ(match.at("loop_fusion"), "loop_fusion");
  EXPECT_EQ(match.at("a"), "a");
}

TEST(InstructionMatch, AFusionDoingOtherWorkHasNoPartner) {
  const hlo::Module before = parse(program("custom-call.0", "custom-call.1", "exponential"));
  const hlo::Module after = parse(program("custom-call.0", "custom-call.1", "tanh"));
  const auto match = match_by_content(instruction_fingerprints(after), instruction_fingerprints(before));
  EXPECT_EQ(match.at("loop_fusion"), "");
  EXPECT_EQ(match.at("custom-call.0"), "custom-call.0");
}

// Two real compilations of one JAX step, XLA's default and another setting
// (reductions emitted by Triton, one GEMM a Triton fusion instead of a
// cuBLAS call): every other instruction of one does work the other does too.
TEST(InstructionMatch, TwoCompilationsOfTheMlpStep) {
  auto def = hlo::parse_program_file(std::string(SL_SOURCE_DIR) +
                                     "/tests/corpus/captures/mlp/module_0000.jit_step.sm_9.0a_gpu_after_optimizations.txt");
  auto nocb = hlo::parse_program_file(
      std::string(SL_SOURCE_DIR) + "/tests/corpus/captures/mlp_nocb/module_0000.jit_step.sm_9.0a_gpu_after_optimizations.txt");
  ASSERT_TRUE(def.is_ok()) << def.status().message();
  ASSERT_TRUE(nocb.is_ok()) << nocb.status().message();
  const std::vector<Fingerprint> prints = instruction_fingerprints(*nocb);
  const auto match = match_by_content(prints, instruction_fingerprints(*def));
  ASSERT_EQ(match.size(), prints.size());
  int renamed = 0;
  for (const Fingerprint& f : prints) {
    if (f.name == "gemm_fusion_dot.2") {
      EXPECT_EQ(match.at(f.name), "");  // the default ran this GEMM as a cuBLAS call
      continue;
    }
    EXPECT_NE(match.at(f.name), "") << f.name << ": " << f.work;
    renamed += match.at(f.name) != f.name;
  }
  // The reductions (kInput there, Triton kCustom here) keep their names; the
  // numbering of the GEMM custom-calls moved.
  EXPECT_EQ(match.at("input_reduce_fusion"), "input_reduce_fusion");
  EXPECT_GT(renamed, 0);
}

}  // namespace
}  // namespace sl::xla
