// `streamlens suggest` through the binary: its --json, and that each
// candidate's args appended to `streamlens run PROGRAM --backend sim`
// reproduce the predicted makespan to the nanosecond.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_test_util.h"

namespace sl {
namespace {

namespace fs = std::filesystem;
using cli_test::sample;
using cli_test::streamlens;

class SuggestCli : public ::testing::Test {
 protected:
  void SetUp() override {
    // Per process and flat ('/' of a parameterised name made a subfolder):
    // other checkouts may run the same test in the same /tmp at once.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = fs::temp_directory_path() / ("sl_suggest_cli_" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string db() const { return (dir_ / "t.db").string(); }
  fs::path dir_;
};

std::string quoted(const std::string& word) { return "'" + word + "'"; }

class SuggestReproduces : public SuggestCli, public ::testing::WithParamInterface<std::string> {};

TEST_P(SuggestReproduces, ArgsReproduceEachCandidatesMakespanThroughRun) {
  const std::string program = sample(GetParam()).string();
  cli_test::Outcome o = streamlens("suggest " + program + " --json --top 3 --budget 200", dir_);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  nlohmann::json j = nlohmann::json::parse(o.out);
  ASSERT_TRUE(j["candidates"].is_array());
  ASSERT_FALSE(j["candidates"].empty()) << GetParam();

  cli_test::Outcome plain = streamlens("run " + program + " --backend sim --device h200 --json --db " + db(), dir_);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(nlohmann::json::parse(plain.out)["makespan_ns"], j["original_makespan_ns"]);

  int64_t previous = 0;
  for (const nlohmann::json& c : j["candidates"]) {
    std::string args;
    for (const nlohmann::json& word : c["args"]) args += " " + quoted(word.get<std::string>());
    cli_test::Outcome run =
        streamlens("run " + program + " --backend sim --device h200 --json --db " + db() + args, dir_);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(nlohmann::json::parse(run.out)["makespan_ns"], c["makespan_ns"]) << args;
    EXPECT_GE(c["makespan_ns"].get<int64_t>(), previous);  // best first
    previous = c["makespan_ns"].get<int64_t>();
    EXPECT_TRUE(c["streams"].is_object());
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, SuggestReproduces,
                         ::testing::Values("windowed_einsum.hlo", "fsdp_per_layer_allgather.hlo",
                                           "allgather_overlap_gemm.hlo", "two_gemms_two_streams.hlo"),
                         [](const auto& info) {
                           std::string n = info.param.substr(0, info.param.find('.'));
                           return n;
                         });

TEST_F(SuggestCli, TextNamesTheBestAndHowToRunIt) {
  cli_test::Outcome o = streamlens("suggest " + sample("two_gemms_two_streams.hlo").string(), dir_);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("exhaustive search"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("--stream gemm1=0"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("reproduce 1: streamlens run"), std::string::npos) << o.out;
  // Piped: no progress bar.
  EXPECT_EQ(o.err.find('\r'), std::string::npos);
}

TEST_F(SuggestCli, SameSeedSameAnswer) {
  const std::string cmd =
      "suggest " + sample("fsdp_per_layer_allgather.hlo").string() + " --search local --budget 150 --seed 3 --json";
  cli_test::Outcome a = streamlens(cmd, dir_);
  cli_test::Outcome b = streamlens(cmd, dir_);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_FALSE(nlohmann::json::parse(a.out)["search"]["exhaustive"].get<bool>());
}

TEST_F(SuggestCli, BadOptionsAreUsageErrors) {
  EXPECT_EQ(streamlens("suggest " + sample("windowed_einsum.hlo").string() + " --comm-sms 32,x", dir_).exit_code, 2);
  EXPECT_EQ(streamlens("suggest " + sample("windowed_einsum.hlo").string() + " --streams 2", dir_).exit_code, 2);
  EXPECT_EQ(streamlens("suggest " + sample("windowed_einsum.hlo").string() + " --verify cpu", dir_).exit_code, 2);
  EXPECT_EQ(streamlens("suggest " + (dir_ / "missing.hlo").string(), dir_).exit_code, 1);
}

// Without a GPU --verify cuda fails before searching, with exit code 3 and
// nothing stored; with one it measures (tiny settings keep that short).
TEST_F(SuggestCli, VerifyCudaNeedsAGpu) {
  cli_test::Outcome o = streamlens("suggest " + sample("small/two_gemms_two_streams.hlo").string() +
                                       " --verify cuda --top 1 --repeats 1 --warmup 0 --iterations 1 --db " + db(),
                                   dir_);
  if (o.exit_code == 0) {
    EXPECT_NE(o.out.find("measured on the GPU"), std::string::npos) << o.out;
    cli_test::Outcome runs = streamlens("runs --json --db " + db(), dir_);
    EXPECT_EQ(nlohmann::json::parse(runs.out).size(), 2u) << runs.out;  // the original and the candidate
    return;
  }
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_NE(o.err.find("--verify cuda"), std::string::npos) << o.err;
  EXPECT_EQ(o.out, "");
}

}  // namespace
}  // namespace sl
