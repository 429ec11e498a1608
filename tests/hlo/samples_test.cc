// Every program under samples/ and samples/small/ parses and verifies, every
// sample has a small twin with the same structure (computations, instruction
// names, opcodes, streams), and the samples the README promises exist.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/hlo/diagnostic.h"
#include "core/hlo/parser.h"
#include "core/hlo/verifier.h"

namespace sl::hlo {
namespace {

namespace fs = std::filesystem;

const fs::path kSamples = fs::path(SL_SOURCE_DIR) / "samples";

std::vector<std::string> hlo_names(const fs::path& dir) {
  std::vector<std::string> names;
  if (!fs::is_directory(dir)) return names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".hlo") names.push_back(entry.path().filename());
  }
  std::sort(names.begin(), names.end());
  return names;
}

void expect_parses_and_verifies(const fs::path& path) {
  SCOPED_TRACE(path.string());
  Result<Module> module = parse_program_file(path.string());
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  EXPECT_TRUE(module->warnings.empty()) << module->warnings.front();
  Status status = verify_status(*module);
  EXPECT_TRUE(status.is_ok()) << status.message();
}

TEST(Samples, PromisedSamplesExist) {
  const std::vector<std::string> names = hlo_names(kSamples);
  for (const char* expected :
       {"fsdp_bucketed_allgather.hlo", "fsdp_per_layer_allgather.hlo", "tuple_reduce_scatter.hlo",
        "windowed_einsum.hlo", "two_gemms_one_stream.hlo", "two_gemms_two_streams.hlo",
        "allgather_overlap_gemm.hlo"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  EXPECT_TRUE(fs::exists(kSamples / "README.md"));
}

TEST(Samples, AllParseAndVerify) {
  const std::vector<std::string> names = hlo_names(kSamples);
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names) expect_parses_and_verifies(kSamples / name);
}

TEST(Samples, SmallTwinsParseAndVerify) {
  const std::vector<std::string> names = hlo_names(kSamples / "small");
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names) expect_parses_and_verifies(kSamples / "small" / name);
}

// Same computations, instruction names, opcodes, streams and device counts;
// only shapes (and element types) differ.
TEST(Samples, EverySampleHasATwinWithTheSameStructure) {
  const std::vector<std::string> full = hlo_names(kSamples);
  const std::vector<std::string> small = hlo_names(kSamples / "small");
  EXPECT_EQ(full, small);
  for (const std::string& name : full) {
    SCOPED_TRACE(name);
    if (!fs::exists(kSamples / "small" / name)) continue;
    Result<Module> a = parse_program_file((kSamples / name).string());
    Result<Module> b = parse_program_file((kSamples / "small" / name).string());
    ASSERT_TRUE(a.is_ok() && b.is_ok());
    EXPECT_EQ(a->replica_count, b->replica_count);
    EXPECT_EQ(a->num_partitions, b->num_partitions);
    ASSERT_EQ(a->computations.size(), b->computations.size());
    for (size_t c = 0; c < a->computations.size(); ++c) {
      const Computation& ca = a->computations[c];
      const Computation& cb = b->computations[c];
      EXPECT_EQ(ca.name, cb.name);
      ASSERT_EQ(ca.instructions.size(), cb.instructions.size()) << ca.name;
      for (size_t i = 0; i < ca.instructions.size(); ++i) {
        const Instruction& ia = ca.instructions[i];
        const Instruction& ib = cb.instructions[i];
        EXPECT_EQ(ia.name, ib.name);
        EXPECT_EQ(ia.opcode, ib.opcode) << ia.name;
        EXPECT_EQ(ia.async_wrapped, ib.async_wrapped) << ia.name;
        EXPECT_EQ(ia.operands, ib.operands) << ia.name;
        EXPECT_EQ(ia.requested_stream(), ib.requested_stream()) << ia.name;
        EXPECT_EQ(ia.shape.leaves().size(), ib.shape.leaves().size()) << ia.name;
      }
    }
  }
}

}  // namespace
}  // namespace sl::hlo
