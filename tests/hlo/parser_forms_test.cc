// The spellings of current XLA text that the first parser did not read:
// mesh replica groups, typed op attributes, shape-less instructions, dynamic
// dimensions, tiled layouts, sugared async forms, the entry by name, and the
// modules taken from XLA's own parser tests (tests/data/hlo/xla_parser).

#include <gtest/gtest.h>

#include <filesystem>

#include "parser_test_util.h"

namespace sl::hlo {
namespace {

using testing::instr;
using testing::parse_error;
using testing::parse_ok;
using Groups = std::vector<std::vector<int64_t>>;

// One all-reduce with the given replica_groups text, parsed.
Groups mesh_groups(const std::string& groups_text) {
  Module m = parse_ok("HloModule m, num_partitions=8\n%sum (a: f32[], b: f32[]) -> f32[] {\n"
                      "  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
                      "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(p), channel_id=1, "
                      "replica_groups=" + groups_text + ", use_global_device_ids=true, to_apply=%sum\n}\n");
  if (m.computations.empty()) return {};
  const Instruction& r = instr(m, "e", "r");
  EXPECT_TRUE(r.replica_groups.has_value());
  if (!r.replica_groups) return {};
  EXPECT_EQ(r.replica_groups->mesh_text, groups_text);
  testing::expect_round_trip(m);
  return r.replica_groups->groups;
}

TEST(ParserForms, MeshReplicaGroups) {
  EXPECT_EQ(mesh_groups("mesh['axis_0'=2] {'axis_0'}"), (Groups{{0, 1}}));
  // Two axes: grouping over the minor one keeps rows, over the major one columns.
  EXPECT_EQ(mesh_groups("mesh['x'=2,'y'=4] {'y'}"), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(mesh_groups("mesh['x'=2,'y'=4] {'x'}"), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // Group order follows the listed axes: y-major here.
  EXPECT_EQ(mesh_groups("mesh['x'=2,'y'=4] {'y','x'}"), (Groups{{0, 4, 1, 5, 2, 6, 3, 7}}));
  EXPECT_EQ(mesh_groups("mesh['x'=2,'y'=4] {'x','y'}"), (Groups{{0, 1, 2, 3, 4, 5, 6, 7}}));
  // No axes: every device on its own.
  EXPECT_EQ(mesh_groups("mesh['x'=2] {}"), (Groups{{0}, {1}}));
  // Sub-axis y:(pre)size splits y=4 into [pre, size, rest] (major to minor)
  // and groups over `size`: (2)2 pairs neighbours, (1)2 devices 2 apart.
  EXPECT_EQ(mesh_groups("mesh['x'=2,'y'=4] {'y':(2)2}"), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(mesh_groups("mesh['x'=2,'y'=4] {'y':(1)2}"), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  // Both halves of y: the group orders devices by the halves as listed.
  EXPECT_EQ(mesh_groups("mesh['y'=4] {'y':(1)2,'y':(2)2}"), (Groups{{0, 1, 2, 3}}));
  EXPECT_EQ(mesh_groups("mesh['y'=4] {'y':(2)2,'y':(1)2}"), (Groups{{0, 2, 1, 3}}));
  // An explicit device order.
  EXPECT_EQ(mesh_groups("mesh['x'=2,'y'=2], device_ids=(3,2,1,0) {'y'}"), (Groups{{3, 2}, {1, 0}}));
  EXPECT_EQ(mesh_groups("maximal_mesh[device_id=5] {}"), (Groups{{5}}));
}

TEST(ParserForms, BadMeshGroupsAreErrors) {
  std::string head = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] all-gather(p), dimensions={0}, "
                     "replica_groups=";
  EXPECT_NE(parse_error(head + "mesh['x'=2] {'z'}\n}\n").find("'z' is not an axis of the mesh"), std::string::npos);
  EXPECT_NE(parse_error(head + "mesh['x'=4] {'x':(3)2}\n}\n").find("does not divide"), std::string::npos);
  EXPECT_NE(parse_error(head + "mesh['x'=2,'x'=2] {'x'}\n}\n").find("appears twice"), std::string::npos);
  EXPECT_NE(parse_error(head + "mesh['x'=2], device_ids=(0,1,2) {'x'}\n}\n").find("device_ids holds 3"),
            std::string::npos);
}

TEST(ParserForms, OpAttributesAreTyped) {
  Module m = parse_ok(R"(HloModule m
%lt (a: f32[], b: f32[]) -> pred[] {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[8,8] parameter(0)
  z = f32[] constant(0)
  pad = f32[10,13] pad(p, z), padding=1_1x2_3_0
  sort = f32[8,8] sort(p), dimensions={1}, is_stable=true, to_apply=%lt
  topk = (f32[8,2], s32[8,2]) topk(p), k=2, largest=false
  key = u64[2] parameter(1)
  rbg = (u64[2], u32[8]) rng-bit-generator(key), algorithm=rng_philox
  rp = f32[8,8] reduce-precision(p), exponent_bits=5, mantissa_bits=10
  conv = f32[8,8] convolution(p, p), window={size=3x3 stride=2x1 pad=1_1x0_2 rhs_dilate=1x2}, dim_labels=bf_io->bf, feature_group_count=2, batch_group_count=1
  a2a = f32[8,8] all-to-all(p), dimensions={1}, replica_groups={{0}}
  ROOT rev = f32[8,8] reverse(p), dimensions={0,1}
})");
  EXPECT_TRUE(m.warnings.empty()) << m.warnings[0];
  const Instruction& pad = instr(m, "e", "pad");
  ASSERT_EQ(pad.padding.size(), 2u);
  EXPECT_EQ(pad.padding[1].low, 2);
  EXPECT_EQ(pad.padding[1].high, 3);
  EXPECT_EQ(instr(m, "e", "sort").is_stable, true);
  EXPECT_EQ(instr(m, "e", "topk").k, 2);
  EXPECT_EQ(instr(m, "e", "topk").largest, false);
  EXPECT_EQ(instr(m, "e", "rbg").rng_algorithm, "rng_philox");
  EXPECT_EQ(instr(m, "e", "rp").exponent_bits, 5);
  EXPECT_EQ(instr(m, "e", "rp").mantissa_bits, 10);
  const Instruction& conv = instr(m, "e", "conv");
  ASSERT_EQ(conv.window.size(), 2u);
  EXPECT_EQ(conv.window[0].stride, 2);
  EXPECT_EQ(conv.window[1].padding_high, 2);
  EXPECT_EQ(conv.window[1].window_dilation, 2);
  EXPECT_EQ(conv.dim_labels, "bf_io->bf");
  EXPECT_EQ(conv.feature_group_count, 2);
  EXPECT_EQ(instr(m, "e", "a2a").dimensions, (std::vector<int64_t>{1}));
  EXPECT_EQ(instr(m, "e", "rev").dimensions, (std::vector<int64_t>{0, 1}));
  testing::expect_round_trip(m);
}

TEST(ParserForms, GemmBackendConfigAndQueues) {
  Module m = parse_ok(R"(HloModule m
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[8,2] parameter(1)
  ROOT g = (f32[4,2], s8[64]) custom-call(a, b), custom_call_target="__cublas$lt$matmul", backend_config={"operation_queue_id":"1","wait_on_operation_queues":["0","2"],"gemm_backend_config":{"alpha_real":2,"alpha_imag":0,"beta":0.5,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"RELU"}}
})");
  const Instruction& g = instr(m, "e", "g");
  ASSERT_TRUE(g.gemm_config.has_value());
  EXPECT_EQ(g.gemm_config->alpha_real, 2.0);
  EXPECT_EQ(g.gemm_config->beta, 0.5);
  EXPECT_EQ(g.gemm_config->epilogue, "RELU");
  EXPECT_EQ(g.wait_on_operation_queues, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(g.operation_queue_id, 1);
}

TEST(ParserForms, InstructionsWithoutResultShapes) {
  Module m = parse_ok(R"(HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  y = f32[3,4] parameter(1)
  n = negate(x)
  c = compare(x, n), direction=GT
  s = select(c, x, n)
  d = dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = transpose(d), dimensions={1,0}
  b = broadcast(x), dimensions={5}
  k = concatenate(x, n), dimensions={0}
  tup = tuple(x, d)
  g = get-tuple-element(tup), index=1
  ROOT id = partition-id()
})");
  EXPECT_EQ(to_string(instr(m, "e", "n").shape), "f32[2,3]");
  EXPECT_EQ(to_string(instr(m, "e", "c").shape), "pred[2,3]");
  EXPECT_EQ(to_string(instr(m, "e", "s").shape), "f32[2,3]");
  EXPECT_EQ(to_string(instr(m, "e", "d").shape), "f32[2,4]");
  EXPECT_EQ(to_string(instr(m, "e", "t").shape), "f32[4,2]");
  EXPECT_EQ(to_string(instr(m, "e", "b").shape), "f32[5,2,3]");
  EXPECT_EQ(to_string(instr(m, "e", "k").shape), "f32[4,3]");
  EXPECT_EQ(to_string(instr(m, "e", "g").shape), "f32[2,4]");
  EXPECT_EQ(to_string(instr(m, "e", "id").shape), "u32[]");
  // XLA's parser refuses these too: their shape is not derivable.
  EXPECT_NE(parse_error("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT c = convert(x)\n}\n")
                .find("expected a shape, got 'convert'"),
            std::string::npos);
}

TEST(ParserForms, ShapesTypesLayoutsAndDynamicDimensions) {
  Module m = parse_ok(R"(HloModule m
ENTRY e {
  a = f8e4m3fn[4,128]{1,0:T(8,128)(2,1)S(1)} parameter(0)
  b = s4[16]{0:E(4)} parameter(1)
  c = f32[<=4,?]{1,0} parameter(2)
  d = (token[], (), opaque[], c128[2]) parameter(3)
  e2 = u16[2]{0} parameter(4)
  ROOT t = ((), f8e5m2[]) tuple()
})");
  EXPECT_EQ(instr(m, "e", "a").shape.type, PrimitiveType::kF8E4M3FN);
  EXPECT_EQ(instr(m, "e", "a").shape.dims, (std::vector<int64_t>{4, 128}));
  EXPECT_EQ(instr(m, "e", "b").shape.type, PrimitiveType::kS4);
  const Shape& c = instr(m, "e", "c").shape;
  EXPECT_EQ(c.dims, (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(c.dynamic_dims, (std::vector<int8_t>{1, 2}));
  EXPECT_EQ(to_string(c), "f32[<=4,?]");
  EXPECT_EQ(to_string(instr(m, "e", "d").shape), "(token[], (), opaque[], c128[2])");
  testing::expect_round_trip(m);
}

TEST(ParserForms, SugaredAsyncForms) {
  Module m = parse_ok(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  s = ((f32[4]), f32[4], s32[]) sqrt-start(x), async_execution_thread="parallel"
  u = ((f32[4]), f32[4], s32[]) sqrt-update(s)
  d = f32[4] sqrt-done(u)
  t = token[] after-all()
  r = (f32[4], u32[], token[]) recv(t), channel_id=2
  rd = (f32[4], token[]) recv-done(r), channel_id=2
  sd0 = (f32[4], u32[], token[]) send(d, t), channel_id=3
  sd = token[] send-done(sd0), channel_id=3
  ROOT o = (f32[4], token[]) tuple(d, sd)
})");
  const Instruction& s = instr(m, "e", "s");
  EXPECT_EQ(s.opcode, Opcode::kAsyncStart);
  EXPECT_EQ(s.async_wrapped, Opcode::kSqrt);
  EXPECT_EQ(s.async_execution_thread, "parallel");
  EXPECT_EQ(instr(m, "e", "d").opcode, Opcode::kAsyncDone);
  EXPECT_EQ(instr(m, "e", "rd").opcode, Opcode::kRecvDone);
  EXPECT_EQ(instr(m, "e", "sd").opcode, Opcode::kSendDone);
  testing::expect_round_trip(m);
  EXPECT_NE(parse_error("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT s = ((f32[4]), f32[4]) frob-start(x)\n}\n")
                .find("unknown opcode 'frob-start'"),
            std::string::npos);
}

TEST(ParserForms, EntryByNameAndControlPredecessorErrors) {
  Module m = parse_ok(R"(HloModule m, entry_computation_name="main"
main {
  ROOT x = f32[] parameter(0)
}
other {
  ROOT y = f32[] parameter(0)
})");
  EXPECT_EQ(m.entry_computation().name, "main");
  EXPECT_NE(parse_error("HloModule m, entry_computation_name=\"nope\"\nmain {\n  ROOT x = f32[] parameter(0)\n}\n")
                .find("entry_computation_name names no computation"),
            std::string::npos);
  EXPECT_NE(parse_error("HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0), control-predecessors={%ghost}\n}\n")
                .find("control-predecessors names undefined instruction %ghost"),
            std::string::npos);
  // A control predecessor may also come later in the text.
  Module later = parse_ok("HloModule m\nENTRY e {\n  a = f32[] parameter(0), control-predecessors={b}\n"
                          "  ROOT b = f32[] negate(a)\n}\n");
  EXPECT_EQ(instr(later, "e", "a").control_predecessors, (std::vector<int>{1}));
}

TEST(ParserForms, StackFrameIdsMustExist) {
  std::string text = R"(HloModule m

FileNames
1 "a.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=7 end_line=7 column=1 end_column=2}

StackFrames
1 {file_location_id=1 parent_frame_id=1}

ENTRY e {
  ROOT x = f32[] parameter(0), metadata={op_name="x" stack_frame_id=2}
}
)";
  EXPECT_NE(parse_error(text).find("stack_frame_id 2 is not in the StackFrames table"), std::string::npos);
  text.replace(text.find("stack_frame_id=2"), 16, "stack_frame_id=1");
  Module m = parse_ok(text);
  EXPECT_EQ(m.source_location(instr(m, "e", "x")), "a.py:7 (f)");
  testing::expect_round_trip(m);
}

TEST(ParserForms, XlaParserTestModulesParseAndRoundTrip) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(SL_SOURCE_DIR) / "tests/data/hlo/xla_parser";
  int count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".hlo") continue;
    SCOPED_TRACE(entry.path().string());
    Result<Module> m = parse_program_file(entry.path().string());
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    testing::expect_round_trip(m.value());
    ++count;
  }
  EXPECT_GE(count, 14);
}

TEST(ParserForms, XlaParserTestModulesKeepTheirDetails) {
  Module sas = parse_ok(R"(HloModule m
%ge (a: f32[], b: f32[]) -> pred[] {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
%add (a: f32[], b: f32[]) -> f32[] {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  s = f32[2] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2}, select=%ge, scatter=%add
})");
  EXPECT_EQ(instr(sas, "e", "r").called, (std::vector<int>{0, 1}));
  testing::expect_round_trip(sas);
}

}  // namespace
}  // namespace sl::hlo
