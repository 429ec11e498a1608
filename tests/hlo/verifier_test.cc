// The verifier's front door: formatted status, rules the parser cannot reach
// from text (modules built or edited in code), and robustness: no Module
// shape may crash it.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

#include "tests/hlo/verify_test_util.h"

namespace sl::hlo {
namespace {

using testing::expect_error_in;
using testing::parse_or_die;

constexpr std::string_view kProgram = R"(HloModule m, num_partitions=2

%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %add = f32[] add(%a, %b)
}

ENTRY %main {
  %x = f32[4,2] parameter(0)
  %y = f32[4,2] parameter(1)
  %m = f32[4,2] multiply(%x, %y)
  %ags = (f32[4,2], f32[8,2]) all-gather-start(%m), dimensions={0}, replica_groups={{0,1}}, channel_id=1, use_global_device_ids=true
  %agd = f32[8,2] all-gather-done(%ags)
  %rs = f32[4,2] reduce-scatter(%agd), dimensions={0}, replica_groups={{0,1}}, channel_id=2, use_global_device_ids=true, to_apply=%sum
  ROOT %out = (f32[4,2], f32[4,2]) tuple(%rs, %m)
}
)";

TEST(Verifier, ValidProgramHasNoDiagnostics) {
  Module module = parse_or_die(kProgram);
  EXPECT_TRUE(verify(module).empty()) << testing::dump(verify(module), kProgram);
  EXPECT_TRUE(verify_status(module).is_ok());
}

TEST(Verifier, StatusHoldsFormattedDiagnostics) {
  std::string text(kProgram);
  text.replace(text.find("%agd = f32[8,2]"), 15, "%agd = f32[9,2]");
  Module module = parse_or_die(text);
  Status status = verify_status(module);
  ASSERT_FALSE(status.is_ok());
  EXPECT_EQ(status.code(), ErrorCode::kInvalidInput);
  const SourceLoc at = testing::locate(text, "%agd =");
  EXPECT_NE(status.message().find(fmt::format("t.hlo:{}:{}: error: all-gather-done shape f32[9,2] does not match "
                                              "the result of %ags, f32[8,2]",
                                              at.line, at.col)),
            std::string::npos)
      << status.message();
  // The source line and a caret follow the message.
  EXPECT_NE(status.message().find("\n  %agd = f32[9,2] all-gather-done(%ags)\n  ^"), std::string::npos)
      << status.message();
}

TEST(Verifier, OperandUsedBeforeDefinition) {
  Module module = parse_or_die(kProgram);
  Computation& main = module.computations[static_cast<size_t>(module.entry)];
  const int m = main.find("m");
  const int out = main.find("out");
  main.instructions[static_cast<size_t>(m)].operands[1] = out;  // %m now reads the ROOT
  expect_error_in(module, kProgram, "%m =", "operand 1 (%out) of %m is used before it is defined");
}

TEST(Verifier, OperandUndefined) {
  Module module = parse_or_die(kProgram);
  Computation& main = module.computations[static_cast<size_t>(module.entry)];
  main.instructions[static_cast<size_t>(main.find("m"))].operands[0] = 99;
  expect_error_in(module, kProgram, "%m =", "operand 0 of %m is undefined");
}

TEST(Verifier, OperandIsItself) {
  Module module = parse_or_die(kProgram);
  Computation& main = module.computations[static_cast<size_t>(module.entry)];
  const int m = main.find("m");
  main.instructions[static_cast<size_t>(m)].operands[0] = m;
  expect_error_in(module, kProgram, "%m =", "%m uses itself as operand 0");
}

TEST(Verifier, ParameterNumberOutOfRange) {
  Module module = parse_or_die(kProgram);
  Computation& main = module.computations[static_cast<size_t>(module.entry)];
  main.instructions[static_cast<size_t>(main.find("y"))].parameter_number = 5;
  expect_error_in(module, kProgram, "%y =",
                  "parameter number 5 is out of range: computation %main has 2 parameters, numbered 0 to 1");
}

TEST(Verifier, ParameterNumberTwice) {
  Module module = parse_or_die(kProgram);
  Computation& main = module.computations[static_cast<size_t>(module.entry)];
  main.instructions[static_cast<size_t>(main.find("y"))].parameter_number = 0;
  expect_error_in(module, kProgram, "%y =", "parameter number 0 is used twice in computation %main (also by %x)");
}

TEST(Verifier, DeclaredSignature) {
  Module module = parse_or_die(kProgram);
  Computation& main = module.computations[static_cast<size_t>(module.entry)];
  main.declared_parameters = std::vector<Shape>{Shape::array(PrimitiveType::kF32, {4, 2}),
                                                Shape::array(PrimitiveType::kBF16, {4, 2})};
  main.declared_result = Shape::array(PrimitiveType::kF32, {4, 2});
  main.loc = testing::locate(kProgram, "ENTRY %main");
  expect_error_in(module, kProgram, "ENTRY %main",
                  "computation %main declares parameter 1 as bf16[4,2], but parameter(1) is f32[4,2]");
  expect_error_in(module, kProgram, "ENTRY %main",
                  "computation %main declares result f32[4,2], but its ROOT is (f32[4,2], f32[4,2])");
  // XLA's parser does not hold the signature's parameter count against the
  // body: only the result is reported.
  main.declared_parameters->pop_back();
  std::vector<Diagnostic> diagnostics = verify(module);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].message.find("declares result"), std::string::npos) << diagnostics[0].message;
}

TEST(Verifier, MissingCalledComputation) {
  Module module = parse_or_die(kProgram);
  Computation& main = module.computations[static_cast<size_t>(module.entry)];
  main.instructions[static_cast<size_t>(main.find("rs"))].called = {42};
  expect_error_in(module, kProgram, "%rs =", "reduce-scatter refers to an undefined to_apply computation");
  main.instructions[static_cast<size_t>(main.find("rs"))].called.clear();
  expect_error_in(module, kProgram, "%rs =", "reduce-scatter is missing its to_apply computation");
}

TEST(Verifier, BadDeviceCounts) {
  Module module = parse_or_die(kProgram);
  module.num_partitions = 0;
  std::vector<Diagnostic> diagnostics = verify(module);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].message.find("num_partitions (0) must be at least 1"), std::string::npos);
}

// Random edits of a valid module (operand and callee indices, shapes, tuple
// indices, dimensions, groups) must give diagnostics, never a crash; the
// sanitizer build turns any out-of-range access into a failure.
TEST(Verifier, SurvivesRandomEdits) {
  const Module original = parse_or_die(kProgram);
  std::mt19937 rng(1234);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const std::vector<Shape> shapes = {Shape::array(PrimitiveType::kF32, {}), Shape::array(PrimitiveType::kF32, {4, 2}),
                                     Shape::tuple({}), Shape::token(),
                                     Shape::tuple({Shape::array(PrimitiveType::kS32, {3})})};
  int with_errors = 0;
  for (int round = 0; round < 2000; ++round) {
    Module module = original;
    for (int edit = 0; edit < 3; ++edit) {
      Computation& c = module.computations[static_cast<size_t>(pick(0, 1))];
      if (c.instructions.empty()) continue;
      Instruction& inst = c.instructions[static_cast<size_t>(pick(0, static_cast<int64_t>(c.instructions.size()) - 1))];
      switch (pick(0, 9)) {
        case 0: if (!inst.operands.empty()) inst.operands[0] = static_cast<int>(pick(-2, 12)); break;
        case 1: inst.operands.push_back(static_cast<int>(pick(-1, 9))); break;
        case 2: inst.operands.clear(); break;
        case 3: inst.shape = shapes[static_cast<size_t>(pick(0, 4))]; break;
        case 4: inst.called = {static_cast<int>(pick(-1, 3))}; break;
        case 5: inst.dimensions = {pick(-3, 5)}; break;
        case 6: inst.tuple_index = pick(-2, 4); break;
        case 7: inst.replica_groups = ReplicaGroups{{{pick(-1, 3)}, {}}, ""}; break;
        case 8: c.root = static_cast<int>(pick(-1, 12)); break;
        case 9: inst.source_target_pairs = {{pick(-1, 3), pick(-1, 3)}}; break;
      }
    }
    if (!verify(module).empty()) ++with_errors;
  }
  EXPECT_GT(with_errors, 1000);
}

TEST(Verifier, SurvivesEmptyModules) {
  Module empty;
  EXPECT_FALSE(verify(empty).empty());
  Module no_instructions;
  no_instructions.computations.emplace_back();
  no_instructions.entry = 0;
  std::vector<Diagnostic> diagnostics = verify(no_instructions);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].message.find("has no instructions"), std::string::npos);
}

// The parser refuses such sizes; a module built in code may still carry them.
TEST(Verifier, HugeShapesAreErrorsNotOverflows) {
  Module module = parse_or_die(kProgram);
  Computation& main = module.computations[static_cast<size_t>(module.entry)];
  main.instructions[static_cast<size_t>(main.find("x"))].shape =
      Shape::array(PrimitiveType::kF32, {int64_t{1} << 62, 2});
  main.instructions[static_cast<size_t>(main.find("agd"))].shape =
      Shape::array(PrimitiveType::kF32, {int64_t{1} << 62, int64_t{1} << 62});
  expect_error_in(module, kProgram, "%x =", "shape f32[4611686018427387904,2] of %x is invalid or too large");
  expect_error_in(module, kProgram, "%agd =", "of %agd is invalid or too large");
}

TEST(Verifier, HugeDeviceCount) {
  Module module = parse_or_die(kProgram);
  module.replica_count = int64_t{1} << 40;
  module.num_partitions = int64_t{1} << 40;
  std::vector<Diagnostic> diagnostics = verify(module);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].message.find("is too large"), std::string::npos);
}

}  // namespace
}  // namespace sl::hlo
