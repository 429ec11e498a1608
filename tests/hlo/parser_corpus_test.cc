// Every HLO module XLA wrote for the JAX corpus (tests/corpus/jax, before and
// after optimizations) parses, round-trips through the printer, and carries
// what the dumps hold: stack frames, mesh replica groups, kept attributes.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "parser_test_util.h"

namespace sl::hlo {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(SL_SOURCE_DIR) / "tests/corpus/jax";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The corpus' HLO modules (the thunk sequences beside them are not HLO).
std::vector<fs::path> corpus_modules() {
  std::vector<fs::path> out;
  if (!fs::is_directory(kCorpus)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(kCorpus)) {
    if (entry.path().extension() != ".txt") continue;
    if (read(entry.path()).rfind("HloModule", 0) == 0) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Module parse_file(const fs::path& path) {
  Result<Module> m = parse_program_file(path.string());
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return m.is_ok() ? std::move(m).value() : Module{};
}

size_t instruction_count(const Module& m) {
  size_t n = 0;
  for (const Computation& c : m.computations) n += c.instructions.size();
  return n;
}

fs::path dump(std::string_view program, std::string_view suffix) {
  for (const fs::path& p : corpus_modules()) {
    if (p.parent_path().filename() == program && p.filename().string().find(suffix) != std::string::npos) return p;
  }
  return {};
}

TEST(ParserCorpus, EveryModuleParsesAndRoundTrips) {
  std::vector<fs::path> modules = corpus_modules();
  if (modules.empty()) GTEST_SKIP() << "no tests/corpus/jax";
  EXPECT_GE(modules.size(), 30u);
  for (const fs::path& path : modules) {
    SCOPED_TRACE(path.string());
    Module m = parse_file(path);
    EXPECT_GT(instruction_count(m), 0u);
    testing::expect_round_trip(m);
  }
}

TEST(ParserCorpus, AfterOptimizationsModulesAreScheduledWithStackFrames) {
  fs::path path = dump("misc_ops", "after_optimizations");
  if (path.empty()) GTEST_SKIP() << "no misc_ops dump";
  Module m = parse_file(path);
  EXPECT_TRUE(m.is_scheduled);
  const StackFrameTables& t = m.stack_frames;
  ASSERT_EQ(t.file_names.size(), 1u);
  EXPECT_NE(t.file_names[0].find("make_dumps.py"), std::string::npos);
  EXPECT_EQ(t.function_names.size(), 4u);
  EXPECT_EQ(t.locations.size(), 19u);
  ASSERT_EQ(t.frames.size(), 22u);
  // `1 {file_location_id=1 parent_frame_id=1}`: XLA writes parent + 1.
  EXPECT_EQ(t.frames[0].parent_frame_id, 0);
  EXPECT_EQ(t.frames[3].parent_frame_id, 3);
  EXPECT_EQ(t.locations[3].line, 129);

  // %add.3.0 in %region_0.1 has stack_frame_id=4: location 4, line 129 of
  // prog_misc_ops.<locals>.f.
  const Instruction& add = testing::instr(m, "region_0.1", "add.3.0");
  EXPECT_EQ(add.metadata.stack_frame_id, 4);
  EXPECT_EQ(add.metadata.op_name, "jit(f)/add");
  std::string where = m.source_location(add);
  EXPECT_NE(where.find("make_dumps.py:129"), std::string::npos) << where;
  EXPECT_NE(where.find("(prog_misc_ops.<locals>.f)"), std::string::npos) << where;
  EXPECT_TRUE(m.warnings.empty()) << m.warnings[0];
}

TEST(ParserCorpus, MeshReplicaGroupsExpand) {
  fs::path path = dump("dp_allreduce_step", "after_optimizations");
  if (path.empty()) GTEST_SKIP() << "no dp_allreduce_step dump";
  Module m = parse_file(path);
  EXPECT_EQ(m.num_partitions, 2);
  EXPECT_TRUE(m.num_partitions_declared);
  int meshes = 0;
  for (const Computation& c : m.computations) {
    for (const Instruction& inst : c.instructions) {
      if (!inst.replica_groups || inst.replica_groups->mesh_text.empty()) continue;
      ++meshes;
      EXPECT_EQ(inst.replica_groups->mesh_text, "mesh['axis_0'=2] {'axis_0'}");
      EXPECT_EQ(inst.replica_groups->groups, (std::vector<std::vector<int64_t>>{{0, 1}}));
    }
  }
  EXPECT_GT(meshes, 0);
}

TEST(ParserCorpus, TupleElementOperandsAndControlPredecessors) {
  fs::path path = dump("scan_rnn", "after_optimizations");
  if (path.empty()) GTEST_SKIP() << "no scan_rnn dump";
  Module m = parse_file(path);
  // `%arg_tuple.1#0` operands become get-tuple-elements named arg_tuple.1#0.
  bool found_element = false, found_control = false;
  for (const Computation& c : m.computations) {
    int i = c.find("arg_tuple.1#0");
    if (i >= 0) {
      const Instruction& gte = c.instructions[static_cast<size_t>(i)];
      EXPECT_EQ(gte.opcode, Opcode::kGetTupleElement);
      EXPECT_EQ(gte.tuple_index, 0);
      EXPECT_EQ(c.instructions[static_cast<size_t>(gte.operands[0])].name, "arg_tuple.1");
      found_element = true;
    }
    for (const Instruction& inst : c.instructions) {
      for (int p : inst.control_predecessors) {
        ASSERT_GE(p, 0);
        ASSERT_LT(static_cast<size_t>(p), c.instructions.size());
        found_control = true;
      }
    }
  }
  EXPECT_TRUE(found_element);
  EXPECT_TRUE(found_control);
}

TEST(ParserCorpus, IrrelevantAttributesAreKeptQuietly) {
  fs::path path = dump("fsdp_step", "before_optimizations");
  if (path.empty()) GTEST_SKIP() << "no fsdp_step dump";
  Module m = parse_file(path);
  bool sharding = false;
  for (const Computation& c : m.computations) {
    for (const Instruction& inst : c.instructions) {
      auto it = inst.attributes.find("sharding");
      if (it == inst.attributes.end()) continue;
      sharding = true;
      EXPECT_EQ(it->second.front(), '{');
    }
  }
  EXPECT_TRUE(sharding);
  for (const std::string& w : m.warnings) EXPECT_EQ(w.find("sharding"), std::string::npos) << w;
}

TEST(ParserCorpus, GatherAndScatterDimensionNumbers) {
  fs::path path = dump("misc_ops", "before_optimizations");
  if (path.empty()) GTEST_SKIP() << "no misc_ops dump";
  Module m = parse_file(path);
  int gathers = 0, scatters = 0;
  for (const Computation& c : m.computations) {
    for (const Instruction& inst : c.instructions) {
      if (inst.opcode == Opcode::kGather) {
        ++gathers;
        EXPECT_FALSE(inst.gather.slice_sizes.empty());
        EXPECT_FALSE(inst.gather.start_index_map.empty());
      }
      if (inst.opcode == Opcode::kScatter) {
        ++scatters;
        EXPECT_FALSE(inst.scatter.scatter_dims_to_operand_dims.empty());
      }
    }
  }
  EXPECT_GT(gathers, 0);
  EXPECT_GT(scatters, 0);
}

}  // namespace
}  // namespace sl::hlo
