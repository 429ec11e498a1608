// bench/FIDELITY-real.md in CI: every committed capture of a real JAX step
// replayed by the trace-driven simulator (`run MODULE --backend sim
// --kernel-times RUN`) against the capture's median step. Programs that meet
// the promised 3% must keep meeting it; the known misses (command buffers
// are not modelled) are pinned at today's error within a small band, so a
// change of them, better or worse, shows here and the pin is moved on purpose.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "tests/cli/cli_test_util.h"

namespace sl::cli_test {
namespace {

namespace fs = std::filesystem;

const fs::path kSource(SL_SOURCE_DIR);
const fs::path kCaptures = kSource / "tests/corpus/captures";
// bench/gpu/real_check.sh's database: captures linked on the device, with
// their modules' text; runs 1, 3, 5, 7 are the captures.
const fs::path kRealDb = kSource / "bench/fidelity/real/h200_real_2026-12-01.db";

constexpr double kTarget = 0.03;     // FIDELITY-real.md: at most 3% each
constexpr double kPinBand = 0.01;    // a pinned miss may move one point either way

struct Expectation {
  bool pinned = false;  // a known miss: at `error` within kPinBand
  double error = 0.0;   // (simulated - measured) / measured
};
void PrintTo(const Expectation& e, std::ostream* os) {
  *os << (e.pinned ? "pinned at " + std::to_string(100 * e.error) + "%" : std::string("within 3%"));
}

class RealReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sl_real_replay_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "t.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  Outcome run(const std::string& args) { return streamlens(args + " --db " + db_, dir_); }

  nlohmann::json json_of(const std::string& args) {
    Outcome o = run(args + " --json");
    EXPECT_EQ(o.exit_code, 0) << args << ": " << o.err;
    return nlohmann::json::parse(o.out, nullptr, false);
  }

  // Replays `module` with the kernel times of linked run `run_id`; the error
  // against that run's median step.
  double replay_error(const std::string& module, int run_id) {
    nlohmann::json shown = json_of("show " + std::to_string(run_id));
    nlohmann::json replay = json_of("run " + module + " --backend sim --kernel-times " + std::to_string(run_id));
    if (!shown.is_object() || !shown.contains("median_iteration_makespan_ns") || !replay.is_object()) {
      ADD_FAILURE() << "no median step or replay for run " << run_id;
      return NAN;
    }
    const double measured = shown["median_iteration_makespan_ns"].get<double>();
    const double simulated = replay["makespan_ns"].get<double>();
    std::printf("%s: measured %.1f us, simulated %.1f us, %+.2f%%\n", module.c_str(), measured / 1e3,
                simulated / 1e3, 100 * (simulated - measured) / measured);
    return measured > 0 ? (simulated - measured) / measured : NAN;
  }

  void expect(double error, const Expectation& e, const std::string& what) {
    if (e.pinned) {
      EXPECT_NEAR(error, e.error, kPinBand)
          << what << ": a known miss moved (pinned at " << 100 * e.error << "% +- " << 100 * kPinBand
          << " points); if it is meant, move the pin here and in bench/FIDELITY-real.md";
    } else {
      EXPECT_LE(std::fabs(error), kTarget) << what << ": " << 100 * error << "%, the target is at most 3%";
    }
  }

  fs::path dir_;
  std::string db_;
};

std::string module_in(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.find("gpu_after_optimizations.txt") != std::string::npos) return entry.path().string();
  }
  return "";
}

// The committed captures of the session's first device call (FIDELITY-real.md (a), second table).
class CommittedCapture : public RealReplay, public ::testing::WithParamInterface<std::pair<std::string, Expectation>> {};

TEST_P(CommittedCapture, ReplayMatchesTheMedianStep) {
#if !SL_HAVE_CUDA_BUILD
  GTEST_SKIP() << "reading capture files needs a CUDA build";
#endif
  const auto& [name, expectation] = GetParam();
  const fs::path capture = kCaptures / name;
  Outcome imported = run("import " + (capture / "capture.jsonl").string() + " --xla-dump " + capture.string());
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  ASSERT_NE(imported.out.find("linked: 31 steps"), std::string::npos) << imported.out;
  expect(replay_error(module_in(capture), 1), expectation, name);
}

INSTANTIATE_TEST_SUITE_P(
    FidelityReal, CommittedCapture,
    // adam: its step has 2 launch-bound intervals, too few for its own host pace, so its
    // replay takes the device file's (the median of ten calls, 7.05 us a kernel), and this
    // call ran slower: -5.7% (-1.6% with the 9.0 fitted on mlp_nocb).
    ::testing::Values(std::pair{std::string("adam"), Expectation{true, -0.057}},
                      std::pair{std::string("layernorm_gelu"), Expectation{}},
                      std::pair{std::string("mlp"), Expectation{}},
                      std::pair{std::string("mlp_nocb"), Expectation{}},
                      // +14.8% until command buffers were modelled (its graph's nodes overlap their
                      // predecessors' tails); within 3% since.
                      std::pair{std::string("transformer_small"), Expectation{}},
                      // Hold-out set 4's 1-D CNN (its def capture), a known miss: -18.4% while
                      // cuDNN's own host code between a call's launches was simulated as the call's
                      // GPU time with the host running ahead; +5.0% since the host stays in the
                      // call (bench/FIDELITY-real.md, "cuDNN's host code").
                      std::pair{std::string("conv1d_train"), Expectation{true, 0.050}},
                      // Hold-out set 6's flax VAE (tests/corpus/jax/holdout6_programs.py), both settings.
                      std::pair{std::string("flax_vae"), Expectation{}},
                      std::pair{std::string("flax_vae_nocb"), Expectation{}},
                      // Hold-out set 7's two-tower model, by default and without Triton GEMMs:
                      // -10.2% while cuBLAS's split-K reductions took the next call's place
                      // in the link (10% of the step unlinked), -0.6% since.
                      std::pair{std::string("two_tower"), Expectation{}},
                      std::pair{std::string("two_tower_notriton"), Expectation{}},
                      // Hold-out set 12's wide regression step, both settings (+0.1%, -0.5%).
                      std::pair{std::string("wide_regression"), Expectation{}},
                      std::pair{std::string("wide_regression_notriton"), Expectation{}}),
    [](const auto& info) { return info.param.first; });

// Hold-out set 19's block conjugate gradient (fori_block_conjugate_gradient,
// default settings; tests/corpus/captures/block_cg, its first 3 steps): of
// its first graph's three copies one shows as a record, and the linker's
// search stayed behind the two that never ran, so it linked 9.7% of the
// steps' GPU time (none after the loop's second trip) and the replay came
// out at -54.5%. Every record is linked since, and the replay is within 3%.
TEST_F(RealReplay, AGraphCopyThatNeverRanLeavesTheStepLinked) {
#if !SL_HAVE_CUDA_BUILD
  GTEST_SKIP() << "reading capture files needs a CUDA build";
#endif
  const fs::path capture = kCaptures / "block_cg";
  Outcome imported = run("import " + (capture / "capture.jsonl").string() + " --xla-dump " + capture.string());
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("linked: 3 steps of jit_f, 100.0% of the GPU time in steps linked"), std::string::npos)
      << imported.out;
  expect(replay_error(module_in(capture), 1), Expectation{}, "block_cg");
}

// FIDELITY-real.md (b): kernel times with command buffers on, the module XLA
// compiled with them off, against that program measured: +20.9% until
// command buffers were modelled; -2.0% with a fixed launch gap; +1.4% since
// XLA's host issues the cb-off module's kernels one by one (host-issue model,
// docs/simulator.md), JAX's f32 dots running as TF32, with the host costs
// fitted on this cb-off capture. Pinned at -10.5% since the device file's
// kernel launch is the median of ten calibration calls (7.05 us): this
// call's host ran at 8.5 us a kernel, which the cb-on capture cannot show
// (bench/FIDELITY-real.md, "The host's pace").
TEST_F(RealReplay, CommandBuffersOffWhatIfMeetsTheTarget) {
#if !SL_HAVE_CUDA_BUILD
  GTEST_SKIP() << "reading capture files needs a CUDA build";
#endif
  ASSERT_EQ(run("import " + (kCaptures / "mlp/capture.jsonl").string() + " --xla-dump " + (kCaptures / "mlp").string())
                .exit_code,
            0);
  ASSERT_EQ(run("import " + (kCaptures / "mlp_nocb/capture.jsonl").string() + " --xla-dump " +
                (kCaptures / "mlp_nocb").string())
                .exit_code,
            0);
  nlohmann::json measured = json_of("show 2");
  nlohmann::json predicted =
      json_of("run " + module_in(kCaptures / "mlp_nocb") + " --backend sim --kernel-times 1 --allow-tf32");
  ASSERT_TRUE(measured.contains("median_iteration_makespan_ns") && predicted.contains("makespan_ns"));
  const double m = measured["median_iteration_makespan_ns"].get<double>();
  const double error = (predicted["makespan_ns"].get<double>() - m) / m;
  expect(error, Expectation{true, -0.105}, "mlp command buffers on -> off");
}

// Hold-out set 6's flax VAE: the module XLA compiled with command buffers
// runs the encoder's first dense layer as a cuBLAS call, the cb-off one as a
// Triton GEMM fusion, so the what-if onto the default module from the cb-off
// capture costs that call by the device model (50 us for a 5 us call) times
// a bias: +70.4% with the median over every matched thunk (x1.23), +6.5%
// with the matched GEMMs' own (x0.12; FIDELITY-real.md, "The GEMMs' own bias");
// +7.5% since a cuBLAS call pays its fixed cost and takes the matched calls'
// bias (FIDELITY-real.md, hold-out set 10); +2.2% since the host costs the
// capture cannot tell apart are the device file's at its pace and a node
// after a PDL launch overlaps its tail (hold-out set 25).
TEST_F(RealReplay, AGemmTheCaptureNeverRanTakesTheGemmsBias) {
#if !SL_HAVE_CUDA_BUILD
  GTEST_SKIP() << "reading capture files needs a CUDA build";
#endif
  for (const char* name : {"flax_vae_nocb", "flax_vae"}) {
    ASSERT_EQ(run("import " + (kCaptures / name / "capture.jsonl").string() + " --xla-dump " + (kCaptures / name).string())
                  .exit_code,
              0);
  }
  nlohmann::json measured = json_of("show 2");
  nlohmann::json predicted = json_of("run " + module_in(kCaptures / "flax_vae") + " --backend sim --kernel-times 1");
  ASSERT_TRUE(measured.contains("median_iteration_makespan_ns") && predicted.contains("makespan_ns"));
  const double m = measured["median_iteration_makespan_ns"].get<double>();
  const double error = (predicted["makespan_ns"].get<double>() - m) / m;
  expect(error, Expectation{true, 0.022}, "flax_vae command buffers off -> on");
}

// Hold-out set 7's two-tower model: the what-if from its default capture
// (every GEMM a Triton fusion) onto the module XLA compiled without Triton
// GEMMs costs its 15 cuBLAS calls by the device model alone (no matched GEMM
// to take a bias from). +615.9% while f32 GEMMs ran at the f32 rate and a
// weight gradient of one output tile ran on one SM; -5.1% with JAX's f32
// dots in TF32 and K split over the idle SMs (FIDELITY-real.md, "Split K and TF32");
// -6.0% since each call also pays cublas_call_us (hold-out set 10); -4.8%
// since the default capture's gaps after its PDL-launched Triton GEMMs stay
// with them (hold-out set 25); -3.7% since a node the capture never ran
// overlaps its predecessor once, not twice (FIDELITY-real.md, "A modelled
// graph node's overlap").
TEST_F(RealReplay, GemmsTheCaptureNeverRanRunInTf32WithTheirKSplit) {
#if !SL_HAVE_CUDA_BUILD
  GTEST_SKIP() << "reading capture files needs a CUDA build";
#endif
  for (const char* name : {"two_tower", "two_tower_notriton"}) {
    ASSERT_EQ(run("import " + (kCaptures / name / "capture.jsonl").string() + " --xla-dump " + (kCaptures / name).string())
                  .exit_code,
              0);
  }
  nlohmann::json measured = json_of("show 2");
  nlohmann::json predicted =
      json_of("run " + module_in(kCaptures / "two_tower_notriton") + " --backend sim --kernel-times 1");
  ASSERT_TRUE(measured.contains("median_iteration_makespan_ns") && predicted.contains("makespan_ns"));
  const double m = measured["median_iteration_makespan_ns"].get<double>();
  const double error = (predicted["makespan_ns"].get<double>() - m) / m;
  expect(error, Expectation{true, -0.037}, "two_tower default -> without Triton GEMMs");
}

// Hold-out set 12's wide regression step (tests/corpus/jax/holdout12_programs.py),
// by default and without Triton GEMMs, each with XLA's autotuning log beside its
// module: the what-if costs the GEMMs the capture never ran by the log's times
// (docs/simulator.md, "XLA's autotuning log"). Blind: -27.0% and -48.7% by the
// model, -4.0% and -1.9% by the log (FIDELITY-real.md, "Set 12's score");
// -6.4% and -5.8% since the log's overhead is taken by backend (the Triton
// and cuBLASLt defaults, 2.76 and 2.23 us, in place of one 2.5: FIDELITY-real.md,
// "What set 18 says next"; better over the other sets, worse on this pair).
// Without the log (the module copied away from it) the what-if is the model's again.
class AutotuneLogWhatIf : public RealReplay {
 protected:
  // The what-if from capture `from` onto capture `to`'s module, against `to`
  // measured; `module` is that module's file (the committed one or a copy).
  double what_if_error(const char* from, const char* to, const std::string& module) {
    run("import " + (kCaptures / from / "capture.jsonl").string() + " --xla-dump " + (kCaptures / from).string());
    run("import " + (kCaptures / to / "capture.jsonl").string() + " --xla-dump " + (kCaptures / to).string());
    nlohmann::json measured = json_of("show 2");
    nlohmann::json predicted = json_of("run " + module + " --backend sim --kernel-times 1");
    if (!measured.contains("median_iteration_makespan_ns") || !predicted.contains("makespan_ns")) {
      ADD_FAILURE() << "no median step or what-if";
      return NAN;
    }
    const double m = measured["median_iteration_makespan_ns"].get<double>();
    return (predicted["makespan_ns"].get<double>() - m) / m;
  }

  int64_t autotuned_thunks() {
    Outcome o = run("query --json \"select value from counters where run_id = 3 and "
                    "name = 'trace_driven.autotuned_thunks'\"");
    nlohmann::json rows = nlohmann::json::parse(o.out, nullptr, false);
    return rows.is_array() && rows.size() == 1 ? rows[0]["value"].get<int64_t>() : -1;
  }
};

struct LogWhatIf {
  const char* from;
  const char* to;
  double pinned_error;
  int64_t autotuned_thunks;  // the cuBLAS calls or Triton fusions the capture never ran
};
void PrintTo(const LogWhatIf& w, std::ostream* os) { *os << w.from << " -> " << w.to; }

class AutotuneLogPair : public AutotuneLogWhatIf, public ::testing::WithParamInterface<LogWhatIf> {};

TEST_P(AutotuneLogPair, GemmsTheCaptureNeverRanCostWhatXlasAutotunerMeasured) {
#if !SL_HAVE_CUDA_BUILD
  GTEST_SKIP() << "reading capture files needs a CUDA build";
#endif
  const LogWhatIf& w = GetParam();
  const double error = what_if_error(w.from, w.to, module_in(kCaptures / w.to));
  expect(error, Expectation{true, w.pinned_error}, std::string(w.from) + " -> " + w.to);
  EXPECT_EQ(autotuned_thunks(), w.autotuned_thunks);
}

// Since hold-out set 25 (the overlap after a PDL launch): def -> notriton
// -6.4% -> -4.3%, notriton -> def -5.8% -> -7.4%.
INSTANTIATE_TEST_SUITE_P(FidelityReal, AutotuneLogPair,
                         ::testing::Values(LogWhatIf{"wide_regression", "wide_regression_notriton", -0.043, 4},
                                           LogWhatIf{"wide_regression_notriton", "wide_regression", -0.074, 5}),
                         [](const auto& info) { return std::string(info.param.to) == "wide_regression" ? "NotritonToDef"
                                                                                                         : "DefToNotriton"; });

TEST_F(AutotuneLogWhatIf, WithoutTheLogTheModelCostsThem) {
#if !SL_HAVE_CUDA_BUILD
  GTEST_SKIP() << "reading capture files needs a CUDA build";
#endif
  const fs::path alone = dir_ / "no_log";
  fs::create_directories(alone);
  for (const auto& entry : fs::directory_iterator(kCaptures / "wide_regression_notriton")) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("module_")) fs::copy_file(entry.path(), alone / name);  // the thunk dumps too
  }
  const double error = what_if_error("wide_regression", "wide_regression_notriton", module_in(alone));
  // -27.0% until hold-out set 25 (the gaps after PDL launches stay with them).
  expect(error, Expectation{true, -0.251}, "wide regression default -> without Triton GEMMs, no log");
  EXPECT_EQ(autotuned_thunks(), 0);
}

// The second device call's captures, in bench/fidelity/real (FIDELITY-real.md (a), first table):
// the database holds each linked module's text, so no capture file is read.
class DeviceCallDb : public RealReplay, public ::testing::WithParamInterface<std::pair<int, Expectation>> {};

TEST_P(DeviceCallDb, ReplayMatchesTheMedianStep) {
  const auto& [run_id, expectation] = GetParam();
  fs::copy_file(kRealDb, db_, fs::copy_options::overwrite_existing);
  Outcome text = run("query --json \"select p.text from programs p join runs r on r.program_id = p.id where r.id = " +
                     std::to_string(run_id) + "\"");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  nlohmann::json rows = nlohmann::json::parse(text.out, nullptr, false);
  ASSERT_TRUE(rows.is_array() && rows.size() == 1 && rows[0]["text"].is_string()) << text.out.substr(0, 200);
  const fs::path module = dir_ / "module.txt";
  std::ofstream(module, std::ios::binary) << rows[0]["text"].get<std::string>();
  expect(replay_error(module.string(), run_id), expectation, "run " + std::to_string(run_id));
}

INSTANTIATE_TEST_SUITE_P(FidelityReal, DeviceCallDb,
                         ::testing::Values(std::pair{1, Expectation{}},  // transformer_train_step_bf16, large
                                           std::pair{3, Expectation{}},  // mlp_train_step, large
                                           std::pair{5, Expectation{}},  // adam_update, large
                                           // scan_rnn: the body's async copies serialise inside its
                                           // command buffer on the GPU: -19.7%.
                                           std::pair{7, Expectation{true, -0.197}}),
                         [](const auto& info) { return "run" + std::to_string(info.param.first); });

}  // namespace
}  // namespace sl::cli_test
