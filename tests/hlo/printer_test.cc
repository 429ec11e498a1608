// print_module output parses back to an equal module.

#include <cmath>

#include "tests/hlo/parser_test_util.h"

namespace sl::hlo {
namespace {

using testing::expect_round_trip;
using testing::parse_ok;

TEST(Printer, RoundTripsEveryDataFile) {
  for (const char* name : {"fsdp_all_gather.hlo", "windowed_einsum.hlo", "async_streams.hlo"}) {
    SCOPED_TRACE(name);
    Result<Module> m = parse_program_file(testing::data_path(name));
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    expect_round_trip(m.value());
  }
}

TEST(Printer, RoundTripsEveryAttributeKind) {
  Module m = parse_ok(R"(HloModule all_attrs, replica_count=2, num_partitions=2
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
cond {
  p = (s32[]) parameter(0)
  ROOT t = pred[] constant(true)
}
fused {
  a = f32[8,6] parameter(0)
  ROOT n = f32[8,6] negate(a)
}
ENTRY main (p: f32[8,6], q: bf16[2]) -> (f32[8,6]) {
  p = f32[8,6] parameter(0)
  q = bf16[2] parameter(1)
  c0 = f32[] constant(-inf)
  c1 = f32[2,2] constant({{1,2},{3,nan}})
  c2 = pred[] constant(false)
  c3 = f32[100] constant({...})
  i = s32[8,6] iota(), iota_dimension=0
  s = f32[2,3] slice(p), slice={[0:2], [1:7:2]}
  z = s32[] constant(0)
  ds = f32[2,6] dynamic-slice(p, z, z), dynamic_slice_sizes={2,6}
  dus = f32[8,6] dynamic-update-slice(p, ds, z, z)
  t = f32[6,8] transpose(p), dimensions={1,0}
  b = f32[4] broadcast(c0), dimensions={}
  cmp = pred[8,6] compare(p, p), direction=NE, type=FLOAT
  d = f32[8,8] dot(p, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bd = f32[8,8] dot(p, t), lhs_batch_dims={}, lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[8] reduce(p, c0), dimensions={1}, to_apply=sum
  ag = (f32[16,6], bf16[4]) all-gather(p, q), channel_id=1, replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true, dimensions={0}
  rs = f32[4,6] reduce-scatter(p), replica_groups={{0,1},{2,3}}, dimensions={0}, to_apply=sum
  ar = f32[8,6] all-reduce(p), replica_groups={}, to_apply=sum
  cp = f32[8,6] collective-permute(p), source_target_pairs={{0,1},{1,0}}
  ags = (f32[8,6], f32[16,6]) all-gather-start(p), replica_groups={{0,1}}, dimensions={0}, backend_config={"operation_queue_id":"0","x":[1,{"y":"\"z\""}]}
  agd = f32[16,6] all-gather-done(ags)
  f = f32[8,6] fusion(p), kind=kLoop, calls=fused
  fs = ((f32[8,6]), f32[8,6], s32[]) fusion-start(p), kind=kLoop, calls=fused
  fd = f32[8,6] fusion-done(fs)
  cc = (f32[8,6], s8[64]) custom-call(p, p), custom_call_target="__cublas$gemm", backend_config="{\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"0\"]}}"
  oq = f32[8,6] negate(p), backend_config="not json \\ \x01", frontend_attributes={_xla_stream_annotation="1",b="two words"}
  w = (s32[]) while(z), condition=cond, body=cond
  k = (s32[]) conditional(c2, z, z), true_computation=cond, false_computation=cond
  as = ((f32[8,6]), f32[8,6], s32[]) async-start(p), calls=fused
  ad = f32[8,6] async-done(as)
  cl = f32[] call(c0, c0), to_apply=sum
  g = f32[8,6] get-tuple-element(ag), index=0
  ROOT out = (f32[8,6]) tuple(g)
})");
  expect_round_trip(m);
  std::string printed = print_module(m);
  EXPECT_NE(printed.find("all-gather-start(%p)"), std::string::npos) << "sugared forms stay sugared\n" << printed;
  EXPECT_NE(printed.find("%agd = f32[16,6] all-gather-done(%ags)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("replica_groups=[2,2]<=[2,2]T(1,0)"), std::string::npos) << "iota spelling kept";
  EXPECT_NE(printed.find("ENTRY %main (p: f32[8,6], q: bf16[2]) -> (f32[8,6]) {"), std::string::npos) << printed;
  EXPECT_NE(printed.find("HloModule all_attrs, replica_count=2, num_partitions=2"), std::string::npos);
  EXPECT_NE(printed.find("condition=%cond, body=%cond"), std::string::npos);
  EXPECT_NE(printed.find("branch_computations={%cond, %cond}"), std::string::npos);
}

TEST(Printer, CommentsInsideValuesDoNotBreakThePrintedLine) {
  Module m = parse_ok("HloModule m\nENTRY main {\n"
                      "  c = f32[2] constant({1, // first\n 2 /* second */})\n"
                      "  e = f32[3] constant({ /* elided */ ... })\n"
                      "  p = f32[4] parameter(0)\n"
                      "  ROOT r = f32[4] all-reduce(p), replica_groups=[1, 2] /* x */ <= // y\n [2], to_apply=add,"
                      " backend_config={\"operation_queue_id\": \"2\" // z\n}\n"
                      "}\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n");
  EXPECT_EQ(testing::instr(m, "main", "c").literal, (std::vector<double>{1, 2}));
  EXPECT_EQ(testing::instr(m, "main", "r").replica_groups->iota_text, "[1,2]<=[2]");
  EXPECT_EQ(m.warnings.size(), 1u) << "JSON with a comment is not read";
  expect_round_trip(m);
  std::string printed = print_module(m);
  EXPECT_NE(printed.find("constant({1, 2})"), std::string::npos) << printed;
  EXPECT_NE(printed.find("constant({...})"), std::string::npos) << printed;
}

TEST(Printer, PrintsConstantsBuiltInCode) {
  Module m;
  m.name = "built";
  Computation c;
  c.name = "main";
  Instruction k;
  k.name = "k";
  k.opcode = Opcode::kConstant;
  k.shape = Shape::array(PrimitiveType::kF32, {2, 3});
  k.literal = {1, 2.5, -3, INFINITY, -INFINITY, 0.1};
  Instruction s;
  s.name = "s";
  s.opcode = Opcode::kConstant;
  s.shape = Shape::array(PrimitiveType::kS32, {});
  s.literal = {-7};
  Instruction t;
  t.name = "t";
  t.opcode = Opcode::kTuple;
  t.shape = Shape::tuple({k.shape, s.shape});
  t.operands = {0, 1};
  t.is_root = true;
  c.instructions = {k, s, t};
  c.root = 2;
  m.computations.push_back(c);
  m.entry = 0;
  std::string printed = print_module(m);
  EXPECT_NE(printed.find("%k = f32[2,3] constant({{1, 2.5, -3}, {inf, -inf, 0.1}})"), std::string::npos) << printed;
  EXPECT_NE(printed.find("%s = s32[] constant(-7)"), std::string::npos) << printed;
  Result<Module> again = parse_program(printed, "x");
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  EXPECT_EQ(again->computations[0].instructions[0].literal, k.literal);
}

TEST(Printer, PrintInstructionIsOneLine) {
  Module m = parse_ok(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(f32[4] p), metadata={op_name="x"}
})");
  const Computation& c = m.entry_computation();
  EXPECT_EQ(print_instruction(m, c, c.instructions[1]), "ROOT %n = f32[4] negate(%p), metadata={op_name=\"x\"}");
  EXPECT_EQ(print_instruction(m, c, c.instructions[0]), "%p = f32[4] parameter(0)");
}

// Layouts print as the module wrote them, tiles and memory spaces included,
// and only where it wrote them (XLA's `f32[2,3]{1,0}`).
TEST(Printer, PrintsLayoutsAsWritten) {
  Module m = parse_ok(R"(HloModule m
ENTRY %main (p: f32[64,16], q: f32[4]) -> (f32[16,64], f32[4]) {
  p = f32[64,16]{0,1} parameter(0)
  q = f32[4]{0} parameter(1)
  r = f32[16,64]{1,0:T(8,128)S(1)} bitcast(p)
  ROOT t = (f32[16,64]{1,0}, f32[4]) tuple(r, q)
})");
  const Computation& c = m.entry_computation();
  EXPECT_EQ(print_instruction(m, c, c.instructions[0]), "%p = f32[64,16]{0,1} parameter(0)");
  EXPECT_EQ(print_instruction(m, c, c.instructions[1]), "%q = f32[4]{0} parameter(1)");
  EXPECT_EQ(print_instruction(m, c, c.instructions[2]), "%r = f32[16,64]{1,0:T(8,128)S(1)} bitcast(%p)");
  EXPECT_EQ(print_instruction(m, c, c.instructions[3]), "ROOT %t = (f32[16,64]{1,0}, f32[4]) tuple(%r, %q)");
  const std::string printed = print_module(m);
  EXPECT_NE(printed.find("(p: f32[64,16], q: f32[4]) -> (f32[16,64], f32[4])"), std::string::npos) << printed;
  expect_round_trip(m);
  // The round trip compares layouts: one that is lost is a difference.
  Module b = m;
  b.computations[0].instructions[0].shape.layout.clear();
  EXPECT_NE(module_difference(m, b).find("shapes differ (f32[64,16]{0,1} vs f32[64,16])"), std::string::npos);
}

TEST(Printer, ModuleDifferenceSeesChanges) {
  Module a = parse_ok(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p), backend_config={"operation_queue_id":"1"}
})");
  Module b = a;
  EXPECT_EQ(module_difference(a, b), "");
  b.computations[0].instructions[1].operation_queue_id = 2;
  EXPECT_NE(module_difference(a, b).find("operation_queue_id differs"), std::string::npos);
  b = a;
  b.computations[0].instructions[1].shape.dims[0] = 5;
  EXPECT_NE(module_difference(a, b).find("shapes differ (f32[4] vs f32[5])"), std::string::npos);
}

// Found by parser_fuzz: a scatter's dimension attribute on a dot was parsed
// into the scatter fields, which the printer writes for scatters alone. On
// another op a gather or scatter attribute is an unknown one, kept as written.
TEST(Printer, GatherAndScatterAttributesElsewhereRoundTripAsWritten) {
  Module m = parse_ok(R"(HloModule m
ENTRY %main {
  %x = f32[4,4] parameter(0)
  ROOT %d = f32[4,4] dot(%x, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}, inserted_window_dims={1}, offset_dims={0}
}
)");
  const Instruction& d = testing::instr(m, "main", "d");
  EXPECT_TRUE(d.scatter.inserted_window_dims.empty());
  EXPECT_TRUE(d.gather.offset_dims.empty());
  EXPECT_EQ(d.attributes.count("inserted_window_dims"), 1u);
  expect_round_trip(m);
}

// Found by parser_fuzz: an attribute kept as written whose string spans
// lines (the lexer allows it) printed a line break inside the string, and
// the printed module no longer parsed.
TEST(Printer, AKeptAttributeWithAStringOverLinesStaysOnItsLine) {
  Module m = parse_ok("HloModule m\nENTRY %main {\n  ROOT %x = f32[4] parameter(0), odd_config={\"a\nb\", 1}\n}\n");
  const Instruction& x = testing::instr(m, "main", "x");
  ASSERT_EQ(x.attributes.count("odd_config"), 1u);
  EXPECT_EQ(x.attributes.at("odd_config"), "{\"a\\nb\", 1}");
  expect_round_trip(m);
}

}  // namespace
}  // namespace sl::hlo
