// Every sample program and small JAX dump against its golden file
// (tests/data/golden): a change of the cost model, the scheduler or the
// evaluator shows as a readable diff. Regenerate with scripts/regen-golden
// and review the diff.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>
#include <string>

#include "tests/golden/golden_text.h"

namespace sl::golden {

// Failure messages name the program, not the bytes of the parameter.
void PrintTo(const Case& c, std::ostream* os) { *os << c.input; }

namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string test_name(const std::string& input) {
  std::string name;
  for (char ch : input) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

class Golden : public ::testing::TestWithParam<Case> {};

TEST_P(Golden, MatchesItsGoldenFile) {
  const Case& c = GetParam();
  const fs::path golden = fs::path(SL_SOURCE_DIR) / c.golden;
  ASSERT_TRUE(fs::exists(golden)) << c.golden << " is missing: run scripts/regen-golden";
  const std::string diff = line_diff(read(golden), golden_text(SL_SOURCE_DIR, c));
  EXPECT_TRUE(diff.empty()) << c.input << " no longer gives " << c.golden
                            << " (- expected, + now; scripts/regen-golden rewrites it once the change is meant):\n"
                            << diff;
}

INSTANTIATE_TEST_SUITE_P(Programs, Golden, ::testing::ValuesIn(list_cases(SL_SOURCE_DIR)),
                         [](const ::testing::TestParamInfo<Case>& info) { return test_name(info.param.input); });

TEST(GoldenFiles, EveryGoldenFileHasItsProgram) {
  std::set<std::string> expected;
  for (const Case& c : list_cases(SL_SOURCE_DIR)) expected.insert(c.golden);
  ASSERT_GE(expected.size(), 30u);  // samples, small samples and the small JAX dumps
  const fs::path root = fs::path(SL_SOURCE_DIR) / "tests/data/golden";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".txt") continue;
    const std::string relative = fs::relative(entry.path(), SL_SOURCE_DIR).generic_string();
    EXPECT_TRUE(expected.count(relative)) << relative << " has no program any more: run scripts/regen-golden";
  }
}

TEST(GoldenDiff, NamesTheChangedLinesOnly) {
  EXPECT_EQ(line_diff("a\nb\nc\n", "a\nb\nc\n"), "");
  EXPECT_EQ(line_diff("a\nb\nc\n", "a\nx\nc\n", 0), "- b\n+ x\n");
  EXPECT_EQ(line_diff("1\n2\n3\n4\n5\n6\n7\n", "1\n2\n3\n4\n5\n6\n8\n", 1), "  6\n- 7\n+ 8\n");
}

}  // namespace
}  // namespace sl::golden
