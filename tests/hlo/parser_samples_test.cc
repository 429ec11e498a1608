// Every program under samples/ parses without warnings and round-trips
// through the printer.

#include <filesystem>

#include "tests/hlo/parser_test_util.h"

namespace sl::hlo {
namespace {

TEST(ParserSamples, EverySampleParsesAndRoundTrips) {
  std::filesystem::path root = std::filesystem::path(SL_SOURCE_DIR) / "samples";
  if (!std::filesystem::is_directory(root)) GTEST_SKIP() << "no samples/ directory";
  int count = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".hlo") continue;
    SCOPED_TRACE(entry.path().string());
    ++count;
    Result<Module> m = parse_program_file(entry.path().string());
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    EXPECT_TRUE(m->warnings.empty()) << m->warnings.front();
    testing::expect_round_trip(m.value());
  }
  if (count == 0) GTEST_SKIP() << "no samples/*.hlo yet";
}

}  // namespace
}  // namespace sl::hlo
