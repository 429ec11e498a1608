// Real XLA dump style modules (tests/data/hlo/*.hlo): layouts, metadata,
// sharding, entry_computation_layout, comments, JSON backend configs.

#include "tests/hlo/parser_test_util.h"

namespace sl::hlo {
namespace {

using testing::instr;

Module parse_data(std::string_view name) {
  Result<Module> m = parse_program_file(testing::data_path(name));
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return m.is_ok() ? std::move(m).value() : Module{};
}

TEST(ParserXlaDump, FsdpTupleAllGather) {
  Module m = parse_data("fsdp_all_gather.hlo");
  EXPECT_EQ(m.name, "pjit_train_step");
  EXPECT_EQ(m.replica_count, 1);
  EXPECT_EQ(m.num_partitions, 4);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  EXPECT_EQ(m.entry_computation().name, "main.42");
  const Instruction& start = instr(m, "main.42", "all-gather-start");
  EXPECT_EQ(start.opcode, Opcode::kAsyncStart);
  EXPECT_EQ(start.async_wrapped, Opcode::kAllGather);
  EXPECT_EQ(start.operands, (std::vector<int>{0, 1, 2}));
  ASSERT_TRUE(start.shape.is_tuple());
  ASSERT_EQ(start.shape.elements.size(), 2u);
  EXPECT_EQ(start.shape.elements[1].elements[2], Shape::array(PrimitiveType::kF32, {1024}));
  EXPECT_EQ(start.replica_groups->groups, (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}}));
  EXPECT_EQ(start.replica_groups->iota_text, "[1,4]<=[4]");
  EXPECT_EQ(start.dimensions, (std::vector<int64_t>{1}));
  EXPECT_EQ(start.channel_id, 1);
  EXPECT_EQ(start.use_global_device_ids, true);
  EXPECT_EQ(start.operation_queue_id, 0);
  EXPECT_NE(start.backend_config.find("collective_backend_config"), std::string::npos);
  const Instruction& done = instr(m, "main.42", "all-gather-done");
  EXPECT_EQ(done.opcode, Opcode::kAsyncDone);
  EXPECT_EQ(done.operands, (std::vector<int>{4}));
  EXPECT_EQ(instr(m, "main.42", "dot.5").dot.lhs_contracting, (std::vector<int64_t>{1}));
  EXPECT_EQ(instr(m, "main.42", "all-reduce.7").called, (std::vector<int>{0}));
  const Computation& entry = m.entry_computation();
  ASSERT_TRUE(entry.declared_parameters.has_value());
  EXPECT_EQ(entry.declared_parameters->size(), 4u);
  EXPECT_EQ(entry.declared_result->elements.size(), 2u);
}

TEST(ParserXlaDump, WindowedEinsumWhileLoop) {
  Module m = parse_data("windowed_einsum.hlo");
  EXPECT_EQ(m.num_partitions, 2);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  EXPECT_EQ(m.entry_computation().name, "main");
  const Instruction& loop = instr(m, "main", "while.44");
  EXPECT_EQ(loop.opcode, Opcode::kWhile);
  ASSERT_EQ(loop.called.size(), 2u);
  EXPECT_EQ(m.computations[static_cast<size_t>(loop.called[0])].name, "windowed_dot_general_cond");
  EXPECT_EQ(m.computations[static_cast<size_t>(loop.called[1])].name, "windowed_dot_general_body");
  EXPECT_EQ(loop.known_trip_count, 2);

  const Instruction& permute = instr(m, "windowed_dot_general_body", "collective-permute-start");
  EXPECT_EQ(permute.async_wrapped, Opcode::kCollectivePermute);
  EXPECT_EQ(permute.shape.elements.size(), 4u);
  EXPECT_EQ(permute.shape.elements[2], Shape::array(PrimitiveType::kU32, {}));
  EXPECT_EQ(permute.source_target_pairs, (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}}));

  const Instruction& gemm = instr(m, "windowed_dot_general_body", "custom-call.1");
  EXPECT_EQ(gemm.custom_call_target, "__cublas$gemm");
  EXPECT_EQ(gemm.operation_queue_id, 1);
  EXPECT_EQ(gemm.requested_stream(), 1);
  EXPECT_EQ(gemm.dot.lhs_contracting, (std::vector<int64_t>{1}));
  EXPECT_EQ(gemm.dot.rhs_contracting, (std::vector<int64_t>{0}));
  EXPECT_TRUE(gemm.dot.lhs_batch.empty());
  EXPECT_EQ(gemm.shape.elements[1], Shape::array(PrimitiveType::kS8, {4194304}));

  const Instruction& dus = instr(m, "windowed_dot_general_body", "dynamic-update-slice.18");
  EXPECT_EQ(dus.operands.size(), 4u);
  EXPECT_EQ(instr(m, "windowed_dot_general_cond", "compare.32").comparison_direction, ComparisonDirection::kLt);
}

TEST(ParserXlaDump, AsyncStreams) {
  Module m = parse_data("async_streams.hlo");
  EXPECT_EQ(m.replica_count, 2);
  const Instruction& start = instr(m, "main", "start");
  EXPECT_EQ(start.opcode, Opcode::kAsyncStart);
  EXPECT_EQ(start.requested_stream(), 2);
  EXPECT_EQ(m.computations[static_cast<size_t>(start.called.at(0))].name, "gemm_comp");
  EXPECT_EQ(instr(m, "main", "call.1").requested_stream(), 1);
  EXPECT_EQ(instr(m, "main", "call.1").frontend_attributes.size(), 2u);
  EXPECT_EQ(instr(m, "main", "call-start").async_wrapped, Opcode::kCall);
  EXPECT_EQ(instr(m, "main", "call-done").async_wrapped, Opcode::kCall);
  EXPECT_EQ(instr(m, "main", "ars").async_wrapped, Opcode::kAllReduce);
  EXPECT_TRUE(instr(m, "main", "ars").replica_groups->groups.empty());
}

TEST(ParserXlaDump, QuotedBackendConfigOfOlderDumps) {
  Module m = testing::parse_ok(R"(HloModule old_dump, entry_computation_layout={(f32[16,32]{1,0}, f32[32,8]{1,0})->(f32[16,8]{1,0}, s8[0]{0})}

ENTRY %cluster_0 (arg0.1: f32[16,32], arg1.2: f32[32,8]) -> (f32[16,8], s8[0]) {
  %arg0.1 = f32[16,32]{1,0} parameter(0), parameter_replication={false}, metadata={op_name="XLA_Args"}
  %arg1.2 = f32[32,8]{1,0} parameter(1), parameter_replication={false}, metadata={op_name="XLA_Args"}
  ROOT %cublas-gemm.1 = (f32[16,8]{1,0}, s8[0]{0}) custom-call(f32[16,32]{1,0} %arg0.1, f32[32,8]{1,0} %arg1.2), custom_call_target="__cublas$gemm", metadata={op_name="MatMul"}, backend_config="{\"alpha_real\":1,\"alpha_imag\":0,\"beta\":0,\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"0\"],\"lhs_batch_dimensions\":[],\"rhs_batch_dimensions\":[]},\"precision_config\":{\"operand_precision\":[\"DEFAULT\",\"DEFAULT\"]},\"epilogue\":\"DEFAULT\"}"
}
)");
  const Instruction& gemm = instr(m, "cluster_0", "cublas-gemm.1");
  EXPECT_EQ(gemm.dot.lhs_contracting, (std::vector<int64_t>{1}));
  EXPECT_EQ(gemm.dot.rhs_contracting, (std::vector<int64_t>{0}));
  EXPECT_EQ(gemm.backend_config.substr(0, 16), "{\"alpha_real\":1,");
  // parameter_replication does not change what runs here: kept, no warning.
  EXPECT_TRUE(m.warnings.empty()) << m.warnings[0];
  EXPECT_EQ(instr(m, "cluster_0", "arg0.1").attributes.at("parameter_replication"), "{false}");
  ASSERT_TRUE(gemm.gemm_config.has_value());
  EXPECT_EQ(gemm.gemm_config->alpha_real, 1.0);
  EXPECT_EQ(gemm.gemm_config->beta, 0.0);
  EXPECT_EQ(gemm.gemm_config->epilogue, "DEFAULT");
}

TEST(ParserXlaDump, SchedulingAnnotationsAndControlPredecessors) {
  Module m = testing::parse_ok(R"(HloModule jit_step, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias) }, num_partitions=2

%region_0.3 (Arg_0.4: f32[], Arg_1.5: f32[]) -> f32[] {
  %Arg_0.4 = f32[] parameter(0), metadata={op_name="jit(step)/reduce_sum"}
  %Arg_1.5 = f32[] parameter(1), metadata={op_name="jit(step)/reduce_sum"}
  ROOT %add.6 = f32[] add(f32[] %Arg_0.4, f32[] %Arg_1.5), metadata={op_name="jit(step)/reduce_sum" source_file="/x.py" source_line=12}
}

ENTRY %main.10 (Arg_0.1: f32[8,16]) -> f32[8] {
  %Arg_0.1 = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  %constant.2 = f32[] constant(0)
  %reduce.7 = f32[8]{0} reduce(f32[8,16]{1,0} %Arg_0.1, f32[] %constant.2), dimensions={1}, to_apply=%region_0.3
  %reduce-scatter.8 = f32[4]{0} reduce-scatter(f32[8]{0} %reduce.7), channel_id=1, replica_groups=[1,2]<=[2], use_global_device_ids=true, dimensions={0}, to_apply=%region_0.3, control-predecessors={%constant.2}, frontend_attributes={_scheduling_group_id="0"}
  ROOT %all-gather.9 = f32[8]{0} all-gather(f32[4]{0} %reduce-scatter.8), channel_id=2, replica_groups=[1,2]<=[2], dimensions={0}, use_global_device_ids=true, sharding={replicated}
}
)");
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  EXPECT_EQ(m.num_partitions, 2);
  const Instruction& rs = instr(m, "main.10", "reduce-scatter.8");
  EXPECT_EQ(rs.replica_groups->groups, (std::vector<std::vector<int64_t>>{{0, 1}}));
  EXPECT_EQ(rs.frontend_attributes.at("_scheduling_group_id"), "0");
  EXPECT_EQ(instr(m, "main.10", "reduce.7").dimensions, (std::vector<int64_t>{1}));
  EXPECT_TRUE(m.is_scheduled);
  EXPECT_TRUE(m.num_partitions_declared);
  EXPECT_FALSE(m.replica_count_declared);
  EXPECT_EQ(rs.control_predecessors, (std::vector<int>{1}));
  EXPECT_EQ(instr(m, "region_0.3", "add.6").metadata.source_file, "/x.py");
  EXPECT_EQ(m.source_location(instr(m, "region_0.3", "add.6")), "/x.py:12");
  testing::expect_round_trip(m);
}

TEST(ParserXlaDump, XlaTestStyleNamesLayoutsAndForeignAttributes) {
  // Unquoted names that equal opcodes, scalar layouts `{}`, sparse/tiled
  // layouts, attributes spread over lines and attribute values such as 2x2.
  Module m = testing::parse_ok(R"(HloModule CollectivePermuteStartAndDone, entry_computation_layout={(f32[128,32]{0,1})->f32[128,32]{0,1}}

ENTRY CollectivePermuteStartAndDone {
  input = f32[128,32]{0,1:D(C+~,S~)#(u32)*(u32)S(42)} parameter(0)
  s = f32[]{} constant(1)
  collective-permute-start.1 = (f32[128,32]{0,1}, f32[128,32]{0,1}, u32[], u32[]) collective-permute-start(input),
      source_target_pairs={{0,1},{1,2},{2,3}}
  collective-permute = f32[128,32]{0,1} collective-permute-done(collective-permute-start.1)
  ROOT r = f32[128,32]{0,1} custom-call(collective-permute), window={size=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="target"
}
)");
  const Instruction& start = instr(m, "CollectivePermuteStartAndDone", "collective-permute-start.1");
  EXPECT_EQ(start.source_target_pairs.size(), 3u);
  EXPECT_EQ(instr(m, "CollectivePermuteStartAndDone", "r").operands, (std::vector<int>{3}));
  EXPECT_EQ(instr(m, "CollectivePermuteStartAndDone", "r").custom_call_target, "target");
  // window and dim_labels are typed now (custom-calls may carry them too).
  EXPECT_TRUE(m.warnings.empty()) << m.warnings[0];
  const Instruction& r = instr(m, "CollectivePermuteStartAndDone", "r");
  ASSERT_EQ(r.window.size(), 2u);
  EXPECT_EQ(r.window[1].size, 2);
  EXPECT_EQ(r.dim_labels, "b01f_01io->b01f");
  testing::expect_round_trip(m);
}

}  // namespace
}  // namespace sl::hlo
