// The real-program path through the streamlens binary: a capture of a JAX
// program (recorded on an H200, tests/corpus/captures) imported and linked to
// the module XLA dumped, shown by step, replayed by the trace-driven
// simulator, and linked again with `link`.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/cli_test_util.h"

namespace sl::cli_test {
namespace {

const std::filesystem::path kCapture = std::filesystem::path(SL_SOURCE_DIR) / "tests/corpus/captures/mlp";
const std::string kModule = (kCapture / "module_0000.jit_step.sm_9.0a_gpu_after_optimizations.txt").string();

class LinkCli : public ::testing::Test {
 protected:
  void SetUp() override {
#if !SL_HAVE_CUDA_BUILD
    GTEST_SKIP() << "reading capture files needs a CUDA build";
#endif
    dir_ = std::filesystem::temp_directory_path() /
           ("sl_link_cli_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
            "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "t.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Outcome run(const std::string& args) { return streamlens(args + " --db " + db_, dir_); }

  std::filesystem::path dir_;
  std::string db_;
};

int64_t makespan_of(const std::string& json_text) {
  auto j = nlohmann::json::parse(json_text, nullptr, false);
  return j.is_object() && j.contains("makespan_ns") ? j["makespan_ns"].get<int64_t>() : -1;
}

TEST_F(LinkCli, ImportsLinksShowsAndReplaysARealCapture) {
  Outcome imported = run("import " + (kCapture / "capture.jsonl").string() + " --xla-dump " + kCapture.string());
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("31 steps of jit_step"), std::string::npos) << imported.out;
  EXPECT_NE(imported.out.find("100.0% of the GPU time in steps linked"), std::string::npos) << imported.out;

  Outcome shown = run("show 1");
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("<- median"), std::string::npos);
  // The median step's row: its idle time (no record running) lies inside its span.
  {
    ASSERT_NE(shown.out.find("IDLE(us)"), std::string::npos) << shown.out.substr(0, 600);
    const size_t end = shown.out.find("<- median");
    const std::string row = shown.out.substr(shown.out.rfind('\n', end) + 1, end - shown.out.rfind('\n', end) - 1);
    std::istringstream fields(row);
    double step = 0, start = 0, span = 0, busy = 0, idle = -1;
    fields >> step >> start >> span >> busy >> idle;
    EXPECT_GE(idle, 0.0) << row;
    EXPECT_LT(idle, span) << row;
  }
  // The median step's instructions name the Python line they came from.
  EXPECT_NE(shown.out.find("make_dumps.py:"), std::string::npos) << shown.out.substr(0, 3000);

  Outcome json = run("show 1 --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto j = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(j.is_object());
  ASSERT_EQ(j["iterations"], 31);
  const int64_t measured = j["median_iteration_makespan_ns"].get<int64_t>();

  Outcome replay = run("run " + kModule + " --backend sim --kernel-times 1 --json");
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const int64_t simulated = makespan_of(replay.out);
  ASSERT_GT(simulated, 0);
  // The replay of the program's own kernels lands within 3% of its median step.
  EXPECT_NEAR(static_cast<double>(simulated), static_cast<double>(measured), 0.03 * static_cast<double>(measured));
}

// The run id an `import` printed ("... as run N ..."), or -1.
int64_t imported_run(const std::string& out) {
  const size_t at = out.find(" as run ");
  return at == std::string::npos ? -1 : std::stoll(out.substr(at + 8));
}

// Two processes of one module (cached decoding, command buffers off),
// captured in a row on an H100 (bench/FIDELITY-real.md, "Does the probe
// tell a fast host from a slow one?"): a's median step 52 us, b's 107, the
// same kernels, and the host probes within 10% of each other at both ends.
TEST_F(LinkCli, TwoCapturesOfOneModuleShowTheirHostProbesAndWhereTheStepsDiffer) {
  const std::filesystem::path captures = std::filesystem::path(SL_SOURCE_DIR) / "tests/corpus/captures";
  int64_t runs[2] = {-1, -1};
  for (int i = 0; i < 2; ++i) {
    const std::filesystem::path dir = captures / (i == 0 ? "decode_nocb_h100_a" : "decode_nocb_h100_b");
    Outcome imported = run("import " + (dir / "capture.jsonl").string() + " --xla-dump " + dir.string());
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
    runs[i] = imported_run(imported.out);
    ASSERT_GT(runs[i], 0) << imported.out;
  }
  Outcome shown = run("show " + std::to_string(runs[0]));
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("host probe: 2451.901 us at the capture's start, 2359.464 us at its end"),
            std::string::npos)
      << shown.out.substr(0, 3000);

  Outcome compared = run("compare " + std::to_string(runs[0]) + " " + std::to_string(runs[1]));
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  EXPECT_NE(compared.out.find("host probe (us)"), std::string::npos) << compared.out;
  // b's step waited on the host, and not because its core ran slowly.
  EXPECT_NE(compared.out.find("the host's pace"), std::string::npos) << compared.out;
  EXPECT_EQ(compared.out.find("different paces"), std::string::npos) << compared.out;

  Outcome json = run("compare " + std::to_string(runs[0]) + " " + std::to_string(runs[1]) + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto j = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << json.out.substr(0, 400);
  EXPECT_EQ(j["a"]["host_probe_ns"]["start"], 2451901);
  EXPECT_EQ(j["b"]["host_probe_ns"]["end"], 2572823);
  EXPECT_GT(j["makespan_b_ns"].get<int64_t>(), 3 * j["makespan_a_ns"].get<int64_t>() / 2);
}

TEST_F(LinkCli, LinkTiesAnImportedCaptureToItsModuleAsANewRun) {
  ASSERT_EQ(run("import " + (kCapture / "capture.jsonl").string()).exit_code, 0);
  Outcome linked = run("link 1 " + kModule);
  ASSERT_EQ(linked.exit_code, 0) << linked.err;
  EXPECT_NE(linked.out.find("as run 2"), std::string::npos) << linked.out;
  Outcome runs = run("runs");
  EXPECT_NE(runs.out.find("linked to jit_step"), std::string::npos) << runs.out;
}

// `query`'s step column: each event's module execution in a linked run,
// NULL outside the steps and in every event of a run never linked.
TEST_F(LinkCli, QueryNumbersTheStepsOfALinkedRunOnly) {
  ASSERT_EQ(run("import " + (kCapture / "capture.jsonl").string()).exit_code, 0);
  ASSERT_EQ(run("link 1 " + kModule).exit_code, 0);
  Outcome o = run("query --json \"select run_id, count(*) as events, count(step) as in_steps, count(distinct step) "
                  "as steps, min(step) as first, max(step) as last, sum(step is not null and step != iteration) "
                  "as other from events group by run_id order by run_id\"");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto rows = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_TRUE(rows.is_array() && rows.size() == 2) << o.out;
  EXPECT_EQ(rows[0]["in_steps"], 0) << o.out;
  EXPECT_EQ(rows[1]["steps"], 31) << o.out;
  EXPECT_EQ(rows[1]["first"], 0) << o.out;
  EXPECT_EQ(rows[1]["last"], 30) << o.out;
  EXPECT_EQ(rows[1]["other"], 0) << o.out;
  // Autotuning and the other modules' kernels stay outside the steps.
  EXPECT_GT(rows[1]["in_steps"].get<int64_t>(), 0);
  EXPECT_LT(rows[1]["in_steps"].get<int64_t>(), rows[1]["events"].get<int64_t>());
}

// A process killed while its capture file was written leaves a last line
// cut short: the import keeps the rest, links it, and says what it lost
// (before, only the run's counters did).
TEST_F(LinkCli, ACaptureCutShortIsImportedWithAWarning) {
  const std::filesystem::path cut = dir_ / "cut.jsonl";
  std::filesystem::copy_file(kCapture / "capture.jsonl", cut);
  {
    std::ofstream out(cut, std::ios::app);
    out << R"({"corr":9,"ctx":1,"dev":0,"end":17966)";
  }
  Outcome imported = run("import " + cut.string() + " --xla-dump " + kCapture.string());
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("31 steps of jit_step"), std::string::npos) << imported.out;
  EXPECT_NE(imported.err.find("1 line of the capture could not be read"), std::string::npos) << imported.err;

  Outcome whole = run("import " + (kCapture / "capture.jsonl").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(whole.err.find("could not be read"), std::string::npos) << whole.err;
}

TEST_F(LinkCli, KernelTimesFromAnUnlinkedRunIsInvalidInput) {
  ASSERT_EQ(run("import " + (kCapture / "capture.jsonl").string()).exit_code, 0);
  Outcome replay = run("run " + kModule + " --backend sim --kernel-times 1");
  EXPECT_EQ(replay.exit_code, 1);
  EXPECT_NE(replay.err.find("no steps"), std::string::npos) << replay.err;
}

TEST_F(LinkCli, LinkingTheWrongModuleSaysSo) {
  ASSERT_EQ(run("import " + (kCapture / "capture.jsonl").string()).exit_code, 0);
  const std::string other =
      std::string(SL_SOURCE_DIR) + "/tests/corpus/captures/adam/module_0000.jit_f.sm_9.0a_gpu_after_optimizations.txt";
  Outcome linked = run("link 1 " + other);
  EXPECT_EQ(linked.exit_code, 1);
  EXPECT_NE(linked.err.find("no execution of module jit_f"), std::string::npos) << linked.err;
}

// A capture names its GPU (the injection library's device lines): the run
// takes it as its device model; one made before them says "cuda".
TEST_F(LinkCli, ACapturedRunsDeviceIsTheGpuItRanOn) {
  const std::string torch = std::string(SL_SOURCE_DIR) + "/tests/data/captures/torch_matmul_h100.jsonl";
  ASSERT_EQ(run("import " + torch + " --name torch").exit_code, 0);
  ASSERT_EQ(run("import " + (kCapture / "capture.jsonl").string() + " --name mlp").exit_code, 0);
  Outcome runs = run("runs --json");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  auto j = nlohmann::json::parse(runs.out, nullptr, false);
  ASSERT_TRUE(j.is_array() && j.size() == 2) << runs.out;
  EXPECT_EQ(j[0].value("device_model", ""), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j[1].value("device_model", ""), "cuda");
}

// A trace-driven run takes the device file of the GPU its capture ran on:
// h100 for a capture on an H100 (the injection library names it), h200 for
// one that names no GPU; --device chooses another.
TEST_F(LinkCli, ATraceDrivenRunTakesTheDeviceFileOfTheCapturesGpu) {
  const std::filesystem::path h100 = std::filesystem::path(SL_SOURCE_DIR) / "tests/corpus/captures/lra_h100";
  const std::string h100_module = (h100 / "module_0000.jit_f.sm_9.0a_gpu_after_optimizations.txt").string();
  ASSERT_EQ(run("import " + (h100 / "capture.jsonl").string() + " --xla-dump " + h100.string()).exit_code, 0);
  ASSERT_EQ(run("import " + (kCapture / "capture.jsonl").string() + " --xla-dump " + kCapture.string()).exit_code, 0);

  Outcome picked = run("run " + h100_module + " --backend sim --kernel-times 1 --json");
  ASSERT_EQ(picked.exit_code, 0) << picked.err;
  EXPECT_NE(picked.err.find("device h100: run 1 ran on NVIDIA H100 80GB HBM3"), std::string::npos) << picked.err;
  auto j = nlohmann::json::parse(picked.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << picked.out.substr(0, 400);
  EXPECT_EQ(j["device_model"].get<std::string>().rfind("h100 + kernel times of run 1", 0), 0u) << j["device_model"];

  Outcome chosen = run("run " + h100_module + " --backend sim --kernel-times 1 --device h200 --json");
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_EQ(chosen.err.find("device h"), std::string::npos) << chosen.err;
  j = nlohmann::json::parse(chosen.out, nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["device_model"].get<std::string>().rfind("h200 + ", 0), 0u) << j["device_model"];

  Outcome unnamed = run("run " + kModule + " --backend sim --kernel-times 2 --json");
  ASSERT_EQ(unnamed.exit_code, 0) << unnamed.err;
  EXPECT_NE(unnamed.err.find("device h200: run 2 does not say which GPU it ran on"), std::string::npos)
      << unnamed.err;

  Outcome missing = run("run " + kModule + " --backend sim --kernel-times 9");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("--kernel-times 9"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace sl::cli_test
