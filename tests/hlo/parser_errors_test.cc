// One test per kind of parse error: the message names the problem and points
// at the offending token (FILE:LINE:COL, source line, caret).

#include "tests/hlo/parser_test_util.h"

namespace sl::hlo {
namespace {

using testing::parse_error;

// Expects the first diagnostic to start with "bad.hlo:LINE:COL: error: " and
// to contain `what`.
void expect_error_at(std::string_view text, int line, int col, std::string_view what) {
  std::string message = parse_error(text, "bad.hlo");
  std::string prefix = "bad.hlo:" + std::to_string(line) + ":" + std::to_string(col) + ": error: ";
  EXPECT_EQ(message.rfind(prefix, 0), 0u) << "want " << prefix << "\ngot:\n" << message;
  EXPECT_NE(message.find(what), std::string::npos) << "want '" << what << "' in:\n" << message;
}

constexpr std::string_view kHead = "HloModule m\nENTRY main {\n";

std::string body(std::string_view lines) { return std::string(kHead) + std::string(lines) + "\n}\n"; }

TEST(ParserErrors, MessageHasSourceLineAndCaret) {
  std::string message = parse_error(body("  p = f32[4] parameter(0)\n  ROOT q = f32[4] frobnicate(p)"), "bad.hlo");
  EXPECT_EQ(message,
            "bad.hlo:4:19: error: unknown opcode 'frobnicate'\n"
            "  ROOT q = f32[4] frobnicate(p)\n"
            "                  ^");
}

TEST(ParserErrors, EmptyFile) {
  expect_error_at("", 1, 1, "module is empty");
  expect_error_at("  // only a comment\n", 2, 1, "module is empty");
  expect_error_at("HloModule m\n", 2, 1, "module is empty");
}

TEST(ParserErrors, UnknownOpcode) { expect_error_at(body("  p = f32[4] frob-start(p)"), 3, 14, "unknown opcode 'frob-start'"); }

TEST(ParserErrors, UndefinedOperand) {
  expect_error_at(body("  p = f32[4] parameter(0)\n  ROOT n = f32[4] add(p, nope)"), 4, 26, "undefined operand %nope");
}

TEST(ParserErrors, OperandDefinedLater) {
  expect_error_at(body("  a = f32[4] negate(b)\n  b = f32[4] parameter(0)"), 3, 21, "operand %b is used before it is defined");
}

TEST(ParserErrors, SelfReference) {
  expect_error_at(body("  p = f32[4] parameter(0)\n  a = f32[4] add(p, %a)"), 4, 21, "operand %a is used before it is defined");
}

TEST(ParserErrors, DuplicateInstructionName) {
  expect_error_at(body("  p = f32[4] parameter(0)\n  p = f32[4] negate(p)"), 4, 3, "duplicate instruction name %p");
}

TEST(ParserErrors, DuplicateComputationName) {
  expect_error_at("HloModule m\nc {\n  ROOT p = f32[] parameter(0)\n}\nc {\n  ROOT p = f32[] parameter(0)\n}\n", 5, 1,
                  "duplicate computation name %c");
}

TEST(ParserErrors, UndefinedComputation) {
  expect_error_at(body("  p = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(p), to_apply=%missing"), 4, 43,
                  "undefined computation %missing");
}

TEST(ParserErrors, RecursiveCall) {
  expect_error_at("HloModule m\nENTRY c {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c\n}\n", 4, 8,
                  "recursive calls are not allowed");
}

TEST(ParserErrors, TwoRoots) {
  expect_error_at(body("  ROOT p = f32[4] parameter(0)\n  ROOT q = f32[4] negate(p)"), 4, 8, "second ROOT");
}

TEST(ParserErrors, TwoEntries) {
  expect_error_at("HloModule m\nENTRY a {\n  ROOT p = f32[] parameter(0)\n}\nENTRY b {\n  ROOT p = f32[] parameter(0)\n}\n",
                  5, 1, "second ENTRY");
}

TEST(ParserErrors, EmptyComputation) { expect_error_at("HloModule m\nENTRY %main {\n}\n", 2, 7, "has no instructions"); }

TEST(ParserErrors, ParameterNumbers) {
  expect_error_at(body("  a = f32[] parameter(0)\n  b = f32[] parameter(0)"), 4, 13, "parameter number 0 is used twice");
  expect_error_at(body("  a = f32[] parameter(5)"), 3, 13, "parameter number 5 is out of range");
  expect_error_at(body("  a = f32[] parameter(-1)"), 3, 23, "must not be negative");
}

TEST(ParserErrors, UnknownElementType) { expect_error_at(body("  p = f33[4] parameter(0)"), 3, 7, "unknown element type 'f33'"); }

TEST(ParserErrors, MissingShape) { expect_error_at(body("  p = parameter(0)"), 3, 7, "expected a shape, got 'parameter'"); }

TEST(ParserErrors, NegativeDimension) { expect_error_at(body("  p = f32[4,-2] parameter(0)"), 3, 13, "negative"); }

TEST(ParserErrors, DimensionOverflow) {
  expect_error_at(body("  p = f32[99999999999999999999] parameter(0)"), 3, 11, "integer 99999999999999999999 is out of range");
}

TEST(ParserErrors, ElementCountOverflow) {
  expect_error_at(body("  p = f32[4294967296,4294967296] parameter(0)"), 3, 7, "too large");
  expect_error_at(body("  p = s64[2305843009213693952] parameter(0)"), 3, 7, "too large");
  expect_error_at(body("  p = (f32[2305843009213693951], f32[2305843009213693951]) parameter(0)"), 3, 7, "too large");
}

TEST(ParserErrors, TokenWithDimensions) { expect_error_at(body("  p = token[2] parameter(0)"), 3, 7, "token[] takes no dimensions"); }

TEST(ParserErrors, MissingEquals) { expect_error_at(body("  p f32[4] parameter(0)"), 3, 5, "expected '=' after the instruction name"); }

TEST(ParserErrors, MissingCloseParen) {
  expect_error_at(body("  p = f32[4] parameter(0)\n  n = f32[4] negate(p\n  ROOT q = f32[4] negate(n)"), 5, 3,
                  "expected ',' or ')' after the operand");
}

TEST(ParserErrors, UnclosedComputation) {
  expect_error_at("HloModule m\nENTRY main {\n  ROOT p = f32[] parameter(0)\n", 4, 1, "expected '}' to close computation %main");
}

TEST(ParserErrors, BadAttributeValues) {
  expect_error_at(body("  p = f32[4] parameter(0)\n  ROOT c = pred[4] compare(p, p), direction=SIDEWAYS"), 4, 45,
                  "comparison direction");
  expect_error_at(body("  p = f32[4] parameter(0)\n  ROOT t = f32[4] transpose(p), dimensions={0,x}"), 4, 47, "expected an integer");
  expect_error_at(body("  p = f32[4] parameter(0)\n  ROOT t = f32[4] copy(p), channel_id=1.5"), 4, 39, "expected an integer");
  expect_error_at(body("  p = f32[4] parameter(0)\n  ROOT t = f32[4] copy(p), use_global_device_ids=yes"), 4, 50,
                  "expected true or false");
  expect_error_at(body("  p = f32[4] parameter(0)\n  ROOT t = f32[4] copy(p), custom_call_target=foo"), 4, 47,
                  "quoted custom_call_target");
  expect_error_at(body("  p = f32[4] parameter(0)\n  ROOT s = f32[2] slice(p), slice={[0 2]}"), 4, 39, "':' in the slice dimension");
  expect_error_at(body("  p = f32[4] parameter(0)\n  ROOT t = f32[4] copy(p), source_target_pairs={{0,1,2}}"), 4, 49,
                  "needs 2 ids");
}

TEST(ParserErrors, BadIotaReplicaGroups) {
  std::string head = "  p = f32[4] parameter(0)\n  ROOT t = f32[4] copy(p), replica_groups=";
  expect_error_at(body(head + "[2,2]<=[5]"), 4, 43, "hold 4 devices but the reshape dimensions hold 5");
  expect_error_at(body(head + "[2,2]<=[2,2]T(0,0)"), 4, 43, "permutation");
  expect_error_at(body(head + "[4]<=[4]"), 4, 43, "[groups,size]");
  expect_error_at(body(head + "[2,2]<=[2,2]T(1)"), 4, 43, "transpose T(...) has 1 entries");
  expect_error_at(body(head + "[1048576,1048576]<=[4]"), 4, 43, "at most");
}

TEST(ParserErrors, ConstantShapeMismatch) {
  expect_error_at(body("  ROOT c = f32[3] constant({1, 2})"), 3, 28, "constant has 2 element(s) in dimension 0");
  expect_error_at(body("  ROOT c = f32[2,2] constant({1, 2})"), 3, 31, "expected '{' for dimension 1");
  expect_error_at(body("  ROOT c = s32[] constant(1.5)"), 3, 27, "not a valid s32 value");
  expect_error_at(body("  ROOT c = s8[] constant(300)"), 3, 26, "out of range for s8");
  expect_error_at(body("  ROOT c = f32[] constant(abc)"), 3, 27, "expected a constant value");
  expect_error_at(body("  ROOT c = (f32[], f32[]) constant({1, 2})"), 3, 36, "expected '(' to open a tuple constant");
  expect_error_at(body("  ROOT c = s64[] constant(99999999999999999999)"), 3, 27, "out of range");
}

TEST(ParserErrors, LexicalErrors) {
  expect_error_at(body("  p = f32[4] parameter(0)\n  ROOT t = f32[4] custom-call(p), custom_call_target=\"abc"), 4, 54,
                  "unterminated string");
  expect_error_at(body("  p = f32[4] parameter(0) /* never closed"), 3, 27, "unterminated /* comment");
  expect_error_at(body("  p = f32[4] parameter(0)\n  q = f32[4] negate(p) \x01"), 4, 24, "unexpected byte 0x01");
  expect_error_at(body("  p = f32[4] \xff" "parameter(0)"), 3, 14, "byte 0xff");
  expect_error_at(body("  p = f32[4] parameter(0)\n  ROOT t = f32[4] custom-call(p), custom_call_target=\"a\\qb\""), 4, 56,
                  "unknown escape sequence");
  expect_error_at(body("  p = f32[12ab] parameter(0)"), 3, 11, "expected an integer, got '12ab'");
}

TEST(ParserErrors, NulByte) {
  std::string text = body("  p = f32[4] parameter(0)");
  text.insert(text.find("parameter"), 1, '\0');
  expect_error_at(text, 3, 14, "byte 0x00");
}

TEST(ParserErrors, UnbalancedSkippedAttribute) {
  expect_error_at(body("  p = f32[4] parameter(0), metadata={op_name=\"x\" ]"), 3, 50, "mismatched ']'");
  expect_error_at("HloModule m\nENTRY main {\n  p = f32[4] parameter(0), metadata={op_name=\"x\"\n", 3, 37,
                  "not closed before end of file");
}

TEST(ParserErrors, BadHeader) {
  expect_error_at("HloModule m, replica_count=0\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n", 1, 28,
                  "replica_count must be at least 1");
  expect_error_at("HloModule m, replica_count=4294967296, num_partitions=4294967296\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
                  1, 55, "exceeds the 65536 devices supported");
  expect_error_at("HloModule m, replica_count=1024, num_partitions=128\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n", 1, 49,
                  "1024 * 128 exceeds");
  expect_error_at("HloModule , replica_count=2\n", 1, 11, "expected a module name");
}

TEST(ParserErrors, SeveralUndefinedOperandsAreAllReported) {
  std::string message = parse_error(body("  ROOT t = (f32[], f32[]) tuple(x, y)"), "bad.hlo");
  EXPECT_NE(message.find("bad.hlo:3:33: error: undefined operand %x"), std::string::npos) << message;
  EXPECT_NE(message.find("bad.hlo:3:36: error: undefined operand %y"), std::string::npos) << message;
}

}  // namespace
}  // namespace sl::hlo

namespace sl::hlo {
namespace {

// A layout's minor-to-major order is a permutation of the dimensions.
TEST(ParserErrors, LayoutNotAPermutationOfTheDimensions) {
  const std::string bad = "HloModule m\nENTRY e {\n  ROOT p = f32[4,2]{5,-1} parameter(0)\n}\n";
  auto module = parse_program(bad, "t.hlo");
  ASSERT_FALSE(module.is_ok());
  EXPECT_NE(module.status().message().find("layout dimension 5"), std::string::npos) << module.status().message();
  auto short_layout = parse_program("HloModule m\nENTRY e {\n  ROOT p = f32[4,2]{0} parameter(0)\n}\n", "t.hlo");
  ASSERT_FALSE(short_layout.is_ok());
  EXPECT_NE(short_layout.status().message().find("names 1 of the 2 dimensions"), std::string::npos);
  EXPECT_TRUE(parse_program("HloModule m\nENTRY e {\n  ROOT p = f32[4,2]{0,1:T(8,128)} parameter(0)\n}\n", "t.hlo")
                  .is_ok());
}

}  // namespace
}  // namespace sl::hlo
