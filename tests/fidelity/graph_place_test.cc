// A what-if across XLA's GEMM choice keeps a graph node's measured idle time
// only where the other module runs the same work at the same place in its
// graph (sim/trace_driven.h, MeasuredTimes::graph_first), launched alike:
// hold-out set 14's Chebyshev filter (tests/corpus/captures/chebyshev_filter*,
// nine steps each), whose loop body's graph starts with the copy into the
// cuBLAS call when Triton GEMMs are off and with a loop counter's add by
// default; and hold-out set 31's ReLU RNN (relu_rnn_projected*_h100, nine
// steps each), whose bodies' graphs both start with the same copy, the
// notriton one's launch tracing a cuBLAS call again.

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "tests/cli/cli_test_util.h"

namespace sl::cli_test {
namespace {

namespace fs = std::filesystem;

const fs::path kGraphCaptures = fs::path(SL_SOURCE_DIR) / "tests/corpus/captures";
const std::string kChebyshevDefModule =
    (kGraphCaptures / "chebyshev_filter/module_0000.jit_f.sm_9.0a_gpu_after_optimizations.txt").string();
const std::string kChebyshevNotritonModule =
    (kGraphCaptures / "chebyshev_filter_notriton/module_0000.jit_f.sm_9.0a_gpu_after_optimizations.txt").string();
const std::string kReluRnnDefModule =
    (kGraphCaptures / "relu_rnn_projected_h100/module_0000.jit_f.sm_9.0a_gpu_after_optimizations.txt").string();
const std::string kReluRnnNotritonModule =
    (kGraphCaptures / "relu_rnn_projected_notriton_h100/module_19191.jit_f.sm_9.0a_gpu_after_optimizations.txt")
        .string();

// Imports a program's default capture (run 1) and its notriton capture (run 2).
class CapturePair : public ::testing::Test {
 protected:
  void import_pair(const char* def, const char* notriton) {
#if !SL_HAVE_CUDA_BUILD
    GTEST_SKIP() << "reading capture files needs a CUDA build";
#endif
    // Both fixtures have a test of the same name, which CTest may run at once.
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("sl_graph_place_" + std::string(test->test_suite_name()) + "_" + std::string(test->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "t.db").string();
    for (const char* name : {def, notriton}) {
      Outcome o = run("import " + (kGraphCaptures / name / "capture.jsonl").string() + " --xla-dump " +
                      (kGraphCaptures / name).string());
      ASSERT_EQ(o.exit_code, 0) << o.err;
      ASSERT_NE(o.out.find("linked: 9 steps of jit_f"), std::string::npos) << o.out;
    }
  }
  void TearDown() override { fs::remove_all(dir_); }
  Outcome run(const std::string& args) { return streamlens(args + " --db " + db_, dir_); }
  nlohmann::json json_of(const std::string& args) {
    Outcome o = run(args + " --json");
    EXPECT_EQ(o.exit_code, 0) << args << ": " << o.err;
    return nlohmann::json::parse(o.out, nullptr, false);
  }
  double error_against(int measured_run, const std::string& module, int times_from) {
    nlohmann::json shown = json_of("show " + std::to_string(measured_run));
    nlohmann::json predicted = json_of("run " + module + " --backend sim --kernel-times " + std::to_string(times_from));
    if (!shown.contains("median_iteration_makespan_ns") || !predicted.contains("makespan_ns")) return 1e9;
    const double m = shown["median_iteration_makespan_ns"].get<double>();
    return (predicted["makespan_ns"].get<double>() - m) / m;
  }

  // How many records of `instruction` in run `run` start more than `ns`
  // after the last record before them ended, and how many there are.
  std::pair<int64_t, int64_t> late_starts(int run_id, const std::string& instruction, int64_t ns) {
    const std::string r = std::to_string(run_id);
    nlohmann::json rows = json_of(
        "query \"select count(*) as n, sum(case when e.start_ns - (select max(p.end_ns) from events p where "
        "p.run_id = " + r + " and p.end_ns <= e.start_ns) > " + std::to_string(ns) +
        " then 1 else 0 end) as late from events e where e.run_id = " + r + " and e.instruction = '" + instruction +
        "'\"");
    if (!rows.is_array() || rows.size() != 1) return {-1, -1};
    return {rows[0]["late"].get<int64_t>(), rows[0]["n"].get<int64_t>()};
  }

  fs::path dir_;
  std::string db_;
};

class GraphPlace : public CapturePair {
 protected:
  void SetUp() override { import_pair("chebyshev_filter", "chebyshev_filter_notriton"); }
};

class GraphLaunch : public CapturePair {
 protected:
  void SetUp() override { import_pair("relu_rnn_projected_h100", "relu_rnn_projected_notriton_h100"); }
};

// The notriton body's first command (copy.5, which waited for each graph
// launch) does the work of the default body's copy.4, its third node, after
// a predecessor: copy.4 follows that predecessor at the graph's own pace
// (it waited 3.7 us a trip, the launch's wait, while every node kept its
// measured gap). Run 3 is the what-if (runs 1, 2: the captures).
TEST_F(GraphPlace, ANodeInsideTheGraphDoesNotWaitTheOtherModulesGraphLaunch) {
  ASSERT_EQ(run("run " + kChebyshevDefModule + " --backend sim --kernel-times 2").exit_code, 0);
  const auto [late, n] = late_starts(3, "copy.4", 1000);
  EXPECT_EQ(n, 64);  // 8 trips a step, the 9 steps' median replayed
  EXPECT_EQ(late, 0);
}

// Both what-ifs pinned (within one point; the whole captures', in
// FIDELITY-real.md, are -13.9% and -6.4%): notriton -> def +12.4% while
// copy.4 waited the launch, -16.5% with this rule (what the default graph's
// own launch waits is not in the notriton capture), -13.9% with the
// autotuning log's default overhead (the notriton log has two samples);
// def -> notriton -15.1% before, -25.7% with this rule and the device
// file's 0 us a graph cuBLAS command, -7.1% at 3.3 (assets/devices/h200.json).
// notriton -> def -17.2% since hold-out set 25: the nodes after the default
// module's PDL-launched Triton GEMMs overlap their tail (-0.48 us; the
// notriton capture's pace is the device file's), a change that helped the
// development data as a whole and set 25 and moved this what-if the wrong way.
TEST_F(GraphPlace, BothWhatIfsArePinned) {
  EXPECT_NEAR(error_against(1, kChebyshevDefModule, 2), -0.172, 0.01);
  EXPECT_NEAR(error_against(2, kChebyshevNotritonModule, 1), -0.071, 0.01);
}

// Both bodies' graphs start with the copy of the trip's input slice
// (fusion-start here), the same place; but the notriton graph's launch also
// traces its dynamic-slice fusion's cuBLAS call again, and its first node
// waited 22.4 us a trip for that launch. The default graph's launch traces
// nothing: its first node waits the launch the host-issue model gives
// (graph_launch_us here, 4.5 us), not the notriton one's. With the notriton
// wait the what-if came out +106% in the whole capture (hold-out set 31).
// Run 3 is the what-if.
TEST_F(GraphLaunch, AGraphsFirstNodeDoesNotWaitALaunchThatTracedAnotherCall) {
  ASSERT_EQ(run("run " + kReluRnnDefModule + " --backend sim --kernel-times 2").exit_code, 0);
  const auto [late, n] = late_starts(3, "fusion-start", 10000);
  EXPECT_EQ(n, 28);    // 28 trips
  EXPECT_LE(late, 1);  // the first trip follows the host's copies and the loop's setup
}

// Both what-ifs pinned (within one point), the nine steps of each capture
// (the whole captures': +9.8% and -7.0%, bench/FIDELITY-real.md, set 32's declaration).
TEST_F(GraphLaunch, BothWhatIfsArePinned) {
  EXPECT_NEAR(error_against(1, kReluRnnDefModule, 2), 0.092, 0.01);
  EXPECT_NEAR(error_against(2, kReluRnnNotritonModule, 1), -0.066, 0.01);
}

}  // namespace
}  // namespace sl::cli_test
