// Every construct of docs/program-format.md, one test each.

#include <cmath>

#include "tests/hlo/parser_test_util.h"

namespace sl::hlo {
namespace {

using testing::instr;
using testing::parse_ok;

TEST(ParserConstructs, HeaderReadsReplicaCountAndPartitionsAndSkipsTheRest) {
  Module m = parse_ok(R"(HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[4]{0})->f32[4]{0}}, replica_count=2, num_partitions=4, frontend_attributes={a="b"}
ENTRY %main (p: f32[4]) -> f32[4] {
  ROOT %p = f32[4]{0} parameter(0)
})");
  EXPECT_EQ(m.name, "jit_f");
  EXPECT_EQ(m.replica_count, 2);
  EXPECT_EQ(m.num_partitions, 4);
  EXPECT_EQ(m.device_count(), 8);
  EXPECT_TRUE(m.warnings.empty());
  EXPECT_EQ(m.file_name, "test.hlo");
  EXPECT_FALSE(m.source_text.empty());
}

TEST(ParserConstructs, ComputationsNamesRootAndEntry) {
  Module m = parse_ok(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
  unused = f32[] negate(x)
}
%main {
  %b = f32[] parameter(1)
  %a = f32[] parameter(0)
  %r = f32[] call(%a, %b), to_apply=add
})");
  ASSERT_EQ(m.computations.size(), 2u);
  EXPECT_EQ(m.entry, 1) << "no ENTRY: the last computation is the entry";
  EXPECT_TRUE(m.computations[1].is_entry);
  EXPECT_FALSE(m.computations[0].is_entry);
  const Computation& add = m.computations[0];
  EXPECT_EQ(add.root, 2) << "ROOT wins over the last instruction";
  EXPECT_TRUE(add.instructions[2].is_root);
  const Computation& main = m.computations[1];
  EXPECT_EQ(main.root, 2) << "no ROOT: the last instruction";
  ASSERT_EQ(main.parameters.size(), 2u);
  EXPECT_EQ(main.parameters[0], 1) << "parameters are indexed by parameter number";
  EXPECT_EQ(main.parameters[1], 0);
  EXPECT_EQ(main.instructions[2].operands, (std::vector<int>{1, 0}));
  EXPECT_EQ(main.instructions[2].called, (std::vector<int>{0}));
  EXPECT_EQ(main.instructions[2].loc.line, 11);
  EXPECT_EQ(main.instructions[2].loc.col, 3);
  EXPECT_EQ(main.instructions[2].opcode_loc.col, 14);
}

TEST(ParserConstructs, EntryMayComeFirstAndCalleesAfterCallers) {
  Module m = parse_ok(R"(HloModule m
ENTRY main {
  p = f32[8] parameter(0)
  ROOT r = f32[8] all-reduce(p), to_apply=%sum
}
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
})");
  EXPECT_EQ(m.entry, 0);
  EXPECT_EQ(m.entry_computation().name, "main");
  EXPECT_EQ(instr(m, "main", "r").called, (std::vector<int>{1}));
}

TEST(ParserConstructs, CommentsAreIgnoredEverywhere) {
  Module m = parse_ok(R"(// leading comment
HloModule m /* inline */, replica_count=2 // trailing
ENTRY main {
  /* multi
     line */ p = f32[2] parameter(0) // param
  ROOT t = (f32[2], /*index=1*/f32[2]) tuple(p, /*index=1*/ p)
})");
  EXPECT_EQ(m.replica_count, 2);
  EXPECT_EQ(instr(m, "main", "t").operands.size(), 2u);
}

TEST(ParserConstructs, OperandsWithAndWithoutShapePrefix) {
  Module m = parse_ok(R"(HloModule m
ENTRY main {
  %x = f32[4,2]{1,0} parameter(0)
  %t = (f32[4,2], s32[]) parameter(1)
  %a = f32[4,2]{1,0} add(f32[4,2]{1,0} %x, x)
  %g = s32[] get-tuple-element((f32[4,2]{1,0}, s32[]) %t), index=1
  ROOT %tiled = f32[4,2]{1,0:T(8,128)(2,1)S(1)} copy(f32[4,2]{1,0:T(8,128)} %a)
})");
  EXPECT_EQ(instr(m, "main", "a").operands, (std::vector<int>{0, 0}));
  EXPECT_EQ(instr(m, "main", "g").tuple_index, 1);
  EXPECT_EQ(instr(m, "main", "tiled").shape, Shape::array(PrimitiveType::kF32, {4, 2}));
}

TEST(ParserConstructs, AllElementTypesTokensAndNestedTuples) {
  Module m = parse_ok(R"(HloModule m
ENTRY main {
  ROOT p = (pred[1], s8[2], s32[3], u32[4], s64[5], f16[6], bf16[7], f32[8], f64[9], token[], (f32[2], (bf16[4], s32[])), ()) parameter(0)
})");
  const Shape& s = instr(m, "main", "p").shape;
  ASSERT_TRUE(s.is_tuple());
  ASSERT_EQ(s.elements.size(), 12u);
  EXPECT_EQ(s.elements[0].type, PrimitiveType::kPred);
  EXPECT_EQ(s.elements[4], Shape::array(PrimitiveType::kS64, {5}));
  EXPECT_EQ(s.elements[6].type, PrimitiveType::kBF16);
  EXPECT_TRUE(s.elements[9].is_token());
  EXPECT_EQ(s.elements[10], Shape::tuple({Shape::array(PrimitiveType::kF32, {2}),
                                          Shape::tuple({Shape::array(PrimitiveType::kBF16, {4}),
                                                        Shape::array(PrimitiveType::kS32, {})})}));
  EXPECT_EQ(s.elements[11], Shape::tuple({}));
  EXPECT_EQ(s.leaves().size(), 13u);
}

TEST(ParserConstructs, ConstantLiterals) {
  Module m = parse_ok(R"(HloModule m
ENTRY main {
  a = f32[] constant(1.5)
  b = f32[] constant(-inf)
  c = f32[] constant(nan)
  d = pred[] constant(true)
  e = s32[3] constant({1, 2, -3})
  f = f32[2,2]{1,0} constant({ { 1, 2 }, { 3, 4.25 } })
  g = f64[] constant(1e-3)
  h = f32[0] constant({})
  i = f32[1000000] constant({...})
  j = f32[] constant(inf)
  ROOT k = pred[2] constant({false, true})
})");
  EXPECT_EQ(instr(m, "main", "a").literal, (std::vector<double>{1.5}));
  EXPECT_EQ(instr(m, "main", "a").literal_text, "1.5");
  EXPECT_TRUE(std::isinf(instr(m, "main", "b").literal.at(0)) && instr(m, "main", "b").literal[0] < 0);
  EXPECT_TRUE(std::isnan(instr(m, "main", "c").literal.at(0)));
  EXPECT_EQ(instr(m, "main", "d").literal, (std::vector<double>{1}));
  EXPECT_EQ(instr(m, "main", "e").literal, (std::vector<double>{1, 2, -3}));
  EXPECT_EQ(instr(m, "main", "f").literal, (std::vector<double>{1, 2, 3, 4.25}));
  EXPECT_EQ(instr(m, "main", "f").literal_text, "{ { 1, 2 }, { 3, 4.25 } }");
  EXPECT_EQ(instr(m, "main", "g").literal, (std::vector<double>{1e-3}));
  EXPECT_TRUE(instr(m, "main", "h").literal.empty());
  EXPECT_TRUE(instr(m, "main", "i").literal.empty()) << "elided constant";
  EXPECT_EQ(instr(m, "main", "i").literal_text, "{...}");
  EXPECT_TRUE(std::isinf(instr(m, "main", "j").literal.at(0)));
  EXPECT_EQ(instr(m, "main", "k").literal, (std::vector<double>{0, 1}));
}

TEST(ParserConstructs, DataOpAttributes) {
  Module m = parse_ok(R"(HloModule m
ENTRY main {
  p = f32[8,6] parameter(0)
  i = s32[8,6] iota(), iota_dimension=1
  s = f32[2,3] slice(p), slice={[0:2], [1:7:2]}
  z = s32[] constant(0)
  ds = f32[2,6] dynamic-slice(p, z, z), dynamic_slice_sizes={2,6}
  t = f32[6,8] transpose(p), dimensions={1,0}
  b = f32[4,8,6] broadcast(p), dimensions={1,2}
  c = f32[16,6] concatenate(p, p), dimensions={0}
  r = f32[48] reshape(p)
  bc = f32[48] bitcast(p)
  cv = bf16[8,6] convert(p)
  ROOT cmp = pred[8,6] compare(p, p), direction=GE, type=TOTALORDER
})");
  EXPECT_EQ(instr(m, "main", "i").iota_dimension, 1);
  const auto& slice = instr(m, "main", "s").slice;
  ASSERT_EQ(slice.size(), 2u);
  EXPECT_EQ(slice[0].start, 0);
  EXPECT_EQ(slice[0].limit, 2);
  EXPECT_EQ(slice[0].stride, 1);
  EXPECT_EQ(slice[1].start, 1);
  EXPECT_EQ(slice[1].limit, 7);
  EXPECT_EQ(slice[1].stride, 2);
  EXPECT_EQ(instr(m, "main", "ds").dynamic_slice_sizes, (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(instr(m, "main", "t").dimensions, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(instr(m, "main", "b").dimensions, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(instr(m, "main", "c").opcode, Opcode::kConcatenate);
  EXPECT_EQ(instr(m, "main", "bc").opcode, Opcode::kBitcast);
  EXPECT_EQ(instr(m, "main", "cmp").comparison_direction, ComparisonDirection::kGe);
  EXPECT_EQ(instr(m, "main", "cmp").comparison_type, "TOTALORDER");
}

TEST(ParserConstructs, ElementwiseOpcodes) {
  Module m = parse_ok(R"(HloModule m
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  o1 = f32[4] subtract(a, b)
  o2 = f32[4] multiply(a, b)
  o3 = f32[4] divide(a, b)
  o4 = f32[4] maximum(a, b)
  o5 = f32[4] minimum(a, b)
  o6 = f32[4] negate(a)
  o7 = f32[4] abs(a)
  o8 = f32[4] exponential(a)
  o9 = f32[4] exp(a)
  o10 = f32[4] remainder(a, b)
  p = pred[4] compare(a, b), direction=LT
  o11 = pred[4] and(p, p)
  o12 = pred[4] or(p, p)
  ROOT o13 = f32[4] select(p, a, b)
})");
  EXPECT_EQ(instr(m, "main", "o8").opcode, Opcode::kExp);
  EXPECT_EQ(instr(m, "main", "o9").opcode, Opcode::kExp);
  EXPECT_EQ(instr(m, "main", "o13").operands, (std::vector<int>{12, 0, 1}));
  EXPECT_EQ(instr(m, "main", "o11").opcode, Opcode::kAnd);
}

TEST(ParserConstructs, DotDimensions) {
  Module m = parse_ok(R"(HloModule m
ENTRY main {
  a = f32[2,8,16] parameter(0)
  b = f32[2,16,4] parameter(1)
  ROOT d = f32[2,8,4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})");
  const DotDims& dot = instr(m, "main", "d").dot;
  EXPECT_EQ(dot.lhs_batch, (std::vector<int64_t>{0}));
  EXPECT_EQ(dot.rhs_batch, (std::vector<int64_t>{0}));
  EXPECT_EQ(dot.lhs_contracting, (std::vector<int64_t>{2}));
  EXPECT_EQ(dot.rhs_contracting, (std::vector<int64_t>{1}));
}

TEST(ParserConstructs, ReplicaGroupsListEmptyAndIota) {
  Module m = parse_ok(R"(HloModule m, replica_count=4
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  p = f32[4] parameter(0)
  l = f32[4] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=sum
  e = f32[4] all-reduce(p), replica_groups={}, to_apply=sum
  i = f32[4] all-reduce(p), replica_groups=[2,2]<=[4], to_apply=sum
  t = f32[4] all-reduce(p), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=sum
  ROOT big = f32[4] all-reduce(p), replica_groups=[3,10]<=[6,5]T(1,0), channel_id=7, use_global_device_ids=true, to_apply=sum
})");
  using Groups = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(instr(m, "main", "l").replica_groups->groups, (Groups{{0, 1}, {2, 3}}));
  EXPECT_TRUE(instr(m, "main", "l").replica_groups->iota_text.empty());
  ASSERT_TRUE(instr(m, "main", "e").replica_groups.has_value());
  EXPECT_TRUE(instr(m, "main", "e").replica_groups->groups.empty());
  EXPECT_EQ(instr(m, "main", "i").replica_groups->groups, (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(instr(m, "main", "i").replica_groups->iota_text, "[2,2]<=[4]");
  EXPECT_EQ(instr(m, "main", "t").replica_groups->groups, (Groups{{0, 2}, {1, 3}}));
  const Instruction& big = instr(m, "main", "big");
  EXPECT_EQ(big.replica_groups->iota_text, "[3,10]<=[6,5]T(1,0)");
  ASSERT_EQ(big.replica_groups->groups.size(), 3u);
  // iota(30) reshaped [6,5], transposed to [5,6]: rows {0,5,10,15,20,25}, {1,6,...}, ...
  // Flattened: 0,5,10,...,25, 1,6,...,26, 2,... cut into 3 groups of 10.
  EXPECT_EQ(big.replica_groups->groups[0], (std::vector<int64_t>{0, 5, 10, 15, 20, 25, 1, 6, 11, 16}));
  EXPECT_EQ(big.replica_groups->groups[1], (std::vector<int64_t>{21, 26, 2, 7, 12, 17, 22, 27, 3, 8}));
  EXPECT_EQ(big.replica_groups->groups[2], (std::vector<int64_t>{13, 18, 23, 28, 4, 9, 14, 19, 24, 29}));
  EXPECT_EQ(big.channel_id, 7);
  EXPECT_EQ(big.use_global_device_ids, true);
  EXPECT_FALSE(instr(m, "main", "l").channel_id.has_value());
}

TEST(ParserConstructs, CollectivesAndPairs) {
  Module m = parse_ok(R"(HloModule m, num_partitions=2
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  p = f32[4] parameter(0)
  q = bf16[2] parameter(1)
  ag = (f32[8], bf16[4]) all-gather(p, q), replica_groups={{0,1}}, dimensions={0}, channel_id=1, use_global_device_ids=true
  rs = f32[2] reduce-scatter(p), replica_groups={{0,1}}, dimensions={0}, to_apply=sum, channel_id=2
  cp = f32[4] collective-permute(p), source_target_pairs={{0,1},{1,0}}, channel_id=3
  rid = u32[] replica-id()
  ROOT pid = u32[] partition-id()
})");
  EXPECT_EQ(instr(m, "main", "ag").operands.size(), 2u);
  EXPECT_EQ(instr(m, "main", "ag").dimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(instr(m, "main", "rs").called, (std::vector<int>{0}));
  using Pairs = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(instr(m, "main", "cp").source_target_pairs, (Pairs{{0, 1}, {1, 0}}));
  EXPECT_TRUE(instr(m, "main", "rid").operands.empty());
  EXPECT_EQ(instr(m, "main", "pid").opcode, Opcode::kPartitionId);
}

TEST(ParserConstructs, ControlFlowCalledComputations) {
  Module m = parse_ok(R"(HloModule m
cond {
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[]) tuple(j)
}
ENTRY main {
  z = s32[] constant(0)
  t = (s32[]) tuple(z)
  w = (s32[]) while(t), body=body, condition=cond, backend_config={"known_trip_count":{"n":"4"}}
  pr = pred[] constant(true)
  c1 = (s32[]) conditional(pr, t, t), true_computation=body, false_computation=cond
  idx = s32[] constant(1)
  ROOT c2 = (s32[]) conditional(idx, t, t), branch_computations={cond, body}
})");
  EXPECT_EQ(instr(m, "main", "w").called, (std::vector<int>{0, 1})) << "condition first, whatever the text order";
  EXPECT_EQ(instr(m, "main", "w").known_trip_count, 4);
  EXPECT_EQ(instr(m, "main", "c1").called, (std::vector<int>{1, 0}));
  EXPECT_EQ(instr(m, "main", "c2").called, (std::vector<int>{0, 1}));
}

TEST(ParserConstructs, FusionAndCustomCall) {
  Module m = parse_ok(R"(HloModule m
fused {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
ENTRY main {
  p = f32[4] parameter(0)
  f = f32[4] fusion(p), kind=kLoop, calls=fused
  ROOT cc = f32[4] custom-call(f), custom_call_target="my$kernel", backend_config="opaque \"text\"\n"
})");
  EXPECT_EQ(instr(m, "main", "f").fusion_kind, "kLoop");
  EXPECT_EQ(instr(m, "main", "f").called, (std::vector<int>{0}));
  EXPECT_EQ(instr(m, "main", "cc").custom_call_target, "my$kernel");
  EXPECT_EQ(instr(m, "main", "cc").backend_config, "opaque \"text\"\n");
  EXPECT_TRUE(m.warnings.empty());
}

TEST(ParserConstructs, BackendConfigObjectAndStringForms) {
  Module m = parse_ok(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  a = f32[4] negate(p), backend_config={"operation_queue_id":"3","wait_on_operation_queues":[1,2]}
  b = f32[4] negate(p), backend_config="{\"operation_queue_id\":5}"
  c = f32[4] negate(p), backend_config={"operation_queue_id":"0"}
  ROOT d = f32[4] negate(p), frontend_attributes={_xla_stream_annotation="2"}
})");
  EXPECT_EQ(instr(m, "main", "a").operation_queue_id, 3);
  EXPECT_EQ(instr(m, "main", "a").backend_config, R"({"operation_queue_id":"3","wait_on_operation_queues":[1,2]})");
  EXPECT_EQ(instr(m, "main", "a").requested_stream(), 3);
  EXPECT_EQ(instr(m, "main", "b").operation_queue_id, 5);
  EXPECT_EQ(instr(m, "main", "b").backend_config, R"({"operation_queue_id":5})");
  EXPECT_EQ(instr(m, "main", "c").operation_queue_id, 0);
  EXPECT_EQ(instr(m, "main", "d").frontend_attributes.at("_xla_stream_annotation"), "2");
  EXPECT_EQ(instr(m, "main", "d").requested_stream(), 2);
  EXPECT_FALSE(instr(m, "main", "p").requested_stream().has_value());
}

TEST(ParserConstructs, CublasGemmDotDimensionsFromBackendConfig) {
  Module m = parse_ok(R"(HloModule m
ENTRY main {
  a = bf16[4,3,8] parameter(0)
  b = bf16[4,8,5] parameter(1)
  g = (bf16[4,3,5], s8[1024]) custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["2"],"rhs_contracting_dimensions":["1"],"lhs_batch_dimensions":["0"],"rhs_batch_dimensions":["0"]}}}
  ROOT lt = (bf16[4,3,5], s8[1024]) custom-call(a, b), backend_config="{\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[2],\"rhs_contracting_dimensions\":[1],\"lhs_batch_dimensions\":[0],\"rhs_batch_dimensions\":[0]}}", custom_call_target="__cublas$lt$matmul"
})");
  for (const char* name : {"g", "lt"}) {
    const DotDims& dot = instr(m, "main", name).dot;
    EXPECT_EQ(dot.lhs_contracting, (std::vector<int64_t>{2})) << name;
    EXPECT_EQ(dot.rhs_contracting, (std::vector<int64_t>{1})) << name;
    EXPECT_EQ(dot.lhs_batch, (std::vector<int64_t>{0})) << name;
    EXPECT_EQ(dot.rhs_batch, (std::vector<int64_t>{0})) << name;
  }
}

TEST(ParserConstructs, UnknownAttributesWarnOnceAndKnownOnesAreSilent) {
  Module m = parse_ok(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0), sharding={devices=[2,1]0,1}, metadata={op_name="a{" source_line=3}
  a = f32[4] negate(p), mystery={{1,2},[3]}, control-predecessors={p}
  b = f32[4] negate(a), mystery=[2,2]<=[4]T(1,0), other=kFoo
  ROOT c = f32[4] negate(b), mystery="x"
})");
  ASSERT_EQ(m.warnings.size(), 2u);
  EXPECT_NE(m.warnings[0].find("test.hlo:4:25: warning: unknown attribute 'mystery' kept as written (3 occurrences)"),
            std::string::npos)
      << m.warnings[0];
  EXPECT_NE(m.warnings[0].find("^"), std::string::npos) << "source line and caret";
  EXPECT_NE(m.warnings[1].find("test.hlo:5:51: warning: unknown attribute 'other'"), std::string::npos)
      << m.warnings[1];
  EXPECT_EQ(instr(m, "main", "c").operands, (std::vector<int>{2}));
  // Kept verbatim (as written after '='), so the printer can write them back.
  EXPECT_EQ(instr(m, "main", "a").attributes.at("mystery"), "{{1,2},[3]}");
  EXPECT_EQ(instr(m, "main", "b").attributes.at("mystery"), "[2,2]<=[4]T(1,0)");
  EXPECT_EQ(instr(m, "main", "b").attributes.at("other"), "kFoo");
  EXPECT_EQ(instr(m, "main", "c").attributes.at("mystery"), "\"x\"");
  EXPECT_EQ(instr(m, "main", "p").attributes.at("sharding"), "{devices=[2,1]0,1}");
  EXPECT_EQ(instr(m, "main", "p").metadata.op_name, "a{");
  EXPECT_EQ(instr(m, "main", "p").metadata.source_line, 3);
  EXPECT_EQ(instr(m, "main", "a").control_predecessors, (std::vector<int>{0}));
  testing::expect_round_trip(m);
}

TEST(ParserConstructs, BadBackendConfigJsonIsAWarning) {
  Module m = parse_ok(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  ROOT a = f32[4] negate(p), backend_config="{not json", frontend_attributes={}
})");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("4:45: warning: backend_config is not a JSON object"), std::string::npos)
      << m.warnings[0];
  EXPECT_FALSE(instr(m, "main", "a").operation_queue_id.has_value());
}

TEST(ParserConstructs, ExplicitAsyncForms) {
  Module m = parse_ok(R"(HloModule m
wrapped {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
ENTRY main {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[4], s32[]) async-start(p), calls=wrapped, async_execution_thread="parallel"
  u = ((f32[4]), f32[4], s32[]) async-update(s)
  ROOT d = f32[4] async-done(u)
})");
  EXPECT_EQ(instr(m, "main", "s").opcode, Opcode::kAsyncStart);
  EXPECT_FALSE(instr(m, "main", "s").async_wrapped.has_value());
  EXPECT_EQ(instr(m, "main", "s").called, (std::vector<int>{0}));
  EXPECT_EQ(instr(m, "main", "s").shape.elements.size(), 3u);
  EXPECT_EQ(instr(m, "main", "u").opcode, Opcode::kAsyncUpdate);
  EXPECT_EQ(instr(m, "main", "d").opcode, Opcode::kAsyncDone);
  EXPECT_TRUE(m.warnings.empty());
}

TEST(ParserConstructs, SugaredAsyncFormsKeepWrappedOpAndStartShape) {
  Module m = parse_ok(R"(HloModule m, replica_count=2
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
fused {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
ENTRY main {
  p = f32[4] parameter(0)
  ags = (f32[4], f32[8]) all-gather-start(p), replica_groups={{0,1}}, dimensions={0}
  agd = f32[8] all-gather-done(ags)
  ars = f32[4] all-reduce-start(p), replica_groups={{0,1}}, to_apply=sum
  ard = f32[4] all-reduce-done(ars)
  rss = ((f32[4]), f32[2]) reduce-scatter-start(p), replica_groups={{0,1}}, dimensions={0}, to_apply=sum
  rsd = f32[2] reduce-scatter-done(rss)
  cps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,1},{1,0}}
  cpd = f32[4] collective-permute-done(cps)
  ccs = ((f32[4]), f32[4], s32[]) custom-call-start(p), custom_call_target="foo"
  ccu = ((f32[4]), f32[4], s32[]) custom-call-update(ccs)
  ccd = f32[4] custom-call-done(ccu)
  fs = ((f32[4]), f32[4], s32[]) fusion-start(p), kind=kLoop, calls=fused
  ROOT fd = f32[4] fusion-done(fs)
})");
  const Instruction& ags = instr(m, "main", "ags");
  EXPECT_EQ(ags.opcode, Opcode::kAsyncStart);
  EXPECT_EQ(ags.async_wrapped, Opcode::kAllGather);
  EXPECT_EQ(ags.dimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(ags.shape, Shape::tuple({Shape::array(PrimitiveType::kF32, {4}), Shape::array(PrimitiveType::kF32, {8})}));
  EXPECT_EQ(instr(m, "main", "agd").opcode, Opcode::kAsyncDone);
  EXPECT_EQ(instr(m, "main", "agd").async_wrapped, Opcode::kAllGather);
  EXPECT_EQ(instr(m, "main", "ars").async_wrapped, Opcode::kAllReduce);
  EXPECT_EQ(instr(m, "main", "ars").called, (std::vector<int>{0}));
  EXPECT_EQ(instr(m, "main", "rss").async_wrapped, Opcode::kReduceScatter);
  EXPECT_EQ(instr(m, "main", "cps").shape.elements.size(), 4u);
  EXPECT_EQ(instr(m, "main", "cps").source_target_pairs.size(), 2u);
  EXPECT_EQ(instr(m, "main", "ccs").custom_call_target, "foo");
  EXPECT_EQ(instr(m, "main", "ccu").opcode, Opcode::kAsyncUpdate);
  EXPECT_EQ(instr(m, "main", "ccu").async_wrapped, Opcode::kCustomCall);
  EXPECT_EQ(instr(m, "main", "fs").async_wrapped, Opcode::kFusion);
  EXPECT_EQ(instr(m, "main", "fs").called, (std::vector<int>{1}));
  EXPECT_EQ(instr(m, "main", "fd").async_wrapped, Opcode::kFusion);
}

TEST(ParserConstructs, ComputationSignatureLayoutsAndExecutionThread) {
  Module m = parse_ok(R"(HloModule m
%c (a: f32[2,2]{1,0}, b: (s32[], f32[]{})) -> f32[2,2]{1,0} {
  a = f32[2,2] parameter(0)
  b = (s32[], f32[]) parameter(1)
  ROOT n = f32[2,2] negate(a)
}, execution_thread="main"
ENTRY %e (s: f32[]) -> f32[]{} {
  ROOT s = f32[] parameter(0)
}
)");
  EXPECT_EQ(m.computations.size(), 2u);
  EXPECT_EQ(m.entry, 1);
}

TEST(ParserConstructs, ParseProgramFileReadsAndReportsMissingFiles) {
  Result<Module> ok = parse_program_file(testing::data_path("async_streams.hlo"));
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  EXPECT_EQ(ok->file_name, testing::data_path("async_streams.hlo"));
  Result<Module> missing = parse_program_file("/nonexistent/x.hlo");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidInput);
  EXPECT_NE(missing.status().message().find("/nonexistent/x.hlo"), std::string::npos);
  EXPECT_FALSE(parse_program_file(SL_SOURCE_DIR).is_ok()) << "a directory is not a program";
}

}  // namespace
}  // namespace sl::hlo
