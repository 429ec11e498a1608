// Forms XLA's parser reads that dumps and XLA's own tests use: nested
// instructions, complex and NaN-payload constants, u64 above int64, and the
// range checks XLA makes on float constants; layouts' minor-to-major order.

#include <cmath>

#include "core/hlo/verifier.h"
#include "tests/hlo/parser_test_util.h"

namespace sl::hlo {
namespace {

using testing::instr;
using testing::parse_error;
using testing::parse_ok;

TEST(ParserXlaForms, NestedInstructionsPrecedeTheirUser) {
  Module m = parse_ok(R"(HloModule m
ENTRY e {
  add = add(f32[10] parameter(0), f32[10] parameter(1))
  ROOT r = add(add, multiply(add, f32[10] broadcast(f32[] parameter(2))))
})");
  const Computation& c = m.entry_computation();
  ASSERT_EQ(c.instructions.size(), 7u);
  const Instruction& r = instr(m, "e", "r");
  EXPECT_EQ(r.shape, Shape::array(PrimitiveType::kF32, {10}));
  ASSERT_EQ(r.operands.size(), 2u);
  const Instruction& mul = c.instructions[static_cast<size_t>(r.operands[1])];
  EXPECT_EQ(mul.opcode, Opcode::kMultiply);
  EXPECT_EQ(mul.name.rfind("multiply.nested.", 0), 0u) << mul.name;
  EXPECT_LT(r.operands[1], c.find("r"));
  const Instruction& bcast = c.instructions[static_cast<size_t>(mul.operands[1])];
  EXPECT_EQ(bcast.opcode, Opcode::kBroadcast);
  EXPECT_LT(mul.operands[1], r.operands[1]);
  EXPECT_EQ(c.parameters.size(), 3u);
  EXPECT_TRUE(verify(m).empty());
}

TEST(ParserXlaForms, NestedInstructionNeedsDefinedOperands) {
  EXPECT_NE(parse_error(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = add(p, negate(later))
  later = f32[2] negate(p)
})").find("nested instruction must name an instruction defined before it"),
            std::string::npos);
  EXPECT_NE(parse_error(R"(HloModule m
ENTRY e {
  ROOT r = negate(parameter(0))
})").find("needs its result shape"),
            std::string::npos);
}

TEST(ParserXlaForms, ComplexConstantsAreRealImaginaryPairs) {
  Module m = parse_ok(R"(HloModule m
ENTRY e {
  ROOT c = c64[2] constant({(1, 2), (-inf, nan)})
})");
  const auto& v = instr(m, "e", "c").literal;
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[1], 2);
  EXPECT_TRUE(std::isinf(v[2]) && v[2] < 0);
  EXPECT_TRUE(std::isnan(v[3]));
  EXPECT_TRUE(verify(m).empty());
  EXPECT_NE(parse_error("HloModule m\nENTRY e {\n  ROOT c = c64[] constant((1e100, 0))\n}").find("rounds to infinity"),
            std::string::npos);
}

TEST(ParserXlaForms, NanPayloadsMustFitTheMantissa) {
  Module m = parse_ok(R"(HloModule m
ENTRY e {
  ROOT c = bf16[2] constant({-nan(0x7f), nan(0x3f)})
})");
  EXPECT_TRUE(std::isnan(instr(m, "e", "c").literal.at(0)));
  EXPECT_NE(parse_error("HloModule m\nENTRY e {\n  ROOT c = bf16[1] constant({nan(0x3ff)})\n}").find("mantissa"),
            std::string::npos);
  EXPECT_NE(parse_error("HloModule m\nENTRY e {\n  ROOT c = f8e4m3fn[1] constant({nan(0x1)})\n}")
                .find("has no NaN payloads"),
            std::string::npos);
}

TEST(ParserXlaForms, FloatsThatRoundToInfinityAreRefused) {
  EXPECT_NE(parse_error("HloModule m\nENTRY e {\n  ROOT c = f16[] constant(-65520)\n}").find("rounds to infinity"),
            std::string::npos);
  parse_ok("HloModule m\nENTRY e {\n  ROOT c = f16[] constant(65519)\n}");
  parse_ok("HloModule m\nENTRY e {\n  ROOT c = bf16[2] constant({-3.39e+38, 3.39e+38})\n}");
}

TEST(ParserXlaForms, U64AboveInt64AndMacLineEnds) {
  Module m = parse_ok("HloModule m\nENTRY e {\n  ROOT c = u64[] constant(9223372036854775808)\n}");
  EXPECT_EQ(instr(m, "e", "c").literal.at(0), 9223372036854775808.0);
  parse_ok("HloModule m // comment\rENTRY e {\r  ROOT c = f32[] constant(1) // x\r}");
}

TEST(ParserXlaForms, TupleConstantsPassCheck) {
  Module m = parse_ok(R"(HloModule m
ENTRY e {
  ROOT c = (f32[2,1], f32[2]) constant(( { {1}, {2} }, {2, 42} ))
})");
  EXPECT_TRUE(verify(m).empty());
  EXPECT_EQ(instr(m, "e", "c").literal, (std::vector<double>{1, 2, 2, 42})) << "the leaves' values in order";
  Module nested = parse_ok("HloModule m\nENTRY e {\n  ROOT c = ((s32[], pred[2]), f32[]) constant(((7, {true, false}), 2))\n}");
  EXPECT_EQ(instr(nested, "e", "c").literal, (std::vector<double>{7, 1, 0, 2}));
  const std::string extra = parse_error("HloModule m\nENTRY e {\n  ROOT c = (f32[], f32[]) constant((1, 2, 3))\n}");
  EXPECT_NE(extra.find("3:36: error: tuple constant has more elements than its shape"), std::string::npos) << extra;
}

TEST(ParserXlaForms, LayoutsKeepTheirMinorToMajorOrder) {
  Module m = parse_ok(R"(HloModule m
ENTRY e {
  p = f32[64,16]{0,1} parameter(0)
  r = f32[16,64]{1,0:T(8,128)S(1)} bitcast(p)
  ROOT v = f32[4]{0} parameter(1)
})");
  const Shape& p = instr(m, "e", "p").shape;
  EXPECT_EQ(p.minor_to_major, (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(p.is_row_major());
  const Shape& r = instr(m, "e", "r").shape;
  EXPECT_EQ(r.minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(r.is_row_major());
  EXPECT_TRUE(instr(m, "e", "v").shape.minor_to_major.empty()) << "rank 1 is always row-major";
  EXPECT_EQ(p, Shape::array(PrimitiveType::kF32, {64, 16})) << "layouts are not part of shape equality";
}

}  // namespace
}  // namespace sl::hlo
