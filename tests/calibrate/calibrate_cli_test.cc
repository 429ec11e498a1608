// `streamlens calibrate` end to end: a measured run (a simulated trace stored
// as backend "cuda", made with known parameters) is fitted and written as a
// device file that --device accepts; simulated runs are refused.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/hlo/parser.h"
#include "core/sched/lowering.h"
#include "core/trace/store/trace_store.h"
#include <nlohmann/json.hpp>

#include "sim/device_model.h"
#include "sim/sim_backend.h"

#ifdef SL_STREAMLENS

namespace sl {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int run_cli(const std::string& args, const std::string& log) {
  std::string command = std::string(SL_STREAMLENS) + " " + args + " > " + log + " 2>&1";
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class CalibrateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sl_calibrate_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    db_ = (dir_ / "runs.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Simulates `sample` with `model` and stores it as a run of `backend`.
  // comm_sms 0 stands for runs recorded before GEMMs beside a collective
  // were confined to fewer SMs: their config has no "comm_sms".
  int64_t store_run(const std::string& sample, const sim::DeviceModel& model, const std::string& backend,
                    int comm_sms = 0) {
    std::string text = read_file(std::string(SL_SOURCE_DIR) + "/samples/" + sample);
    Result<hlo::Module> module = hlo::parse_program(text, sample);
    EXPECT_TRUE(module.is_ok());
    Result<sched::LoweredProgram> lowered = sched::lower(*module, {});
    EXPECT_TRUE(lowered.is_ok());
    exec::RunOptions options;
    options.comm_sms = comm_sms;
    Result<exec::RunOutput> out = sim::make_sim_backend(model)->run(*lowered, options);
    EXPECT_TRUE(out.is_ok());
    auto store = trace::TraceStore::open(db_);
    EXPECT_TRUE(store.is_ok());
    trace::RunInfo info;
    info.name = sample;
    info.program_name = module->name;
    info.backend = backend;
    info.device_model = backend == "sim" ? "h200" : "NVIDIA H200 x2";
    info.num_devices = static_cast<int64_t>(lowered->devices.size());
    info.makespan_ns = out->trace.makespan_ns();
    info.config_json = comm_sms > 0 ? fmt::format("{{\"comm_sms\": {}}}", comm_sms) : "{}";
    auto id = (*store)->save_run(info, text, lowered->streams, out->trace);
    EXPECT_TRUE(id.is_ok()) << id.status().message();
    return id.is_ok() ? *id : -1;
  }

  fs::path dir_;
  std::string db_;
};

TEST_F(CalibrateCli, FitsMeasuredRunsAndWritesALoadableDeviceFile) {
  Result<sim::DeviceModel> truth = sim::load_device_model("h200");
  ASSERT_TRUE(truth.is_ok());
  truth->contention_factor = 1.1;
  truth->nccl_bus_bandwidth_gbps = 210;
  truth->gemm_efficiency.values[2][2][2] = 0.78;
  int64_t a = store_run("allgather_overlap_gemm.hlo", *truth, "cuda");
  int64_t b = store_run("two_gemms_one_stream.hlo", *truth, "cuda");
  std::string out = (dir_ / "fitted.json").string();
  std::string log = (dir_ / "log.txt").string();
  ASSERT_EQ(run_cli(fmt::format("calibrate {} {} -o {} --db {}", a, b, out, db_), log), 0) << read_file(log);
  EXPECT_NE(read_file(log).find("contention_factor"), std::string::npos) << read_file(log);
  Result<sim::DeviceModel> fitted = sim::load_device_model(out);
  ASSERT_TRUE(fitted.is_ok()) << fitted.status().message();
  EXPECT_NEAR(fitted->gemm_efficiency.values[2][2][2], 0.78, 0.78 * 0.02);
  EXPECT_NEAR(fitted->contention_factor, 1.1, 1.1 * 0.02);
  // The only all-gather ran beside the GEMM: no bandwidth to fit, the base value stays and the output says why.
  EXPECT_EQ(fitted->nccl_bus_bandwidth_gbps, sim::load_device_model("h200")->nccl_bus_bandwidth_gbps);
  EXPECT_NE(read_file(log).find("collectives: none ran without compute"), std::string::npos) << read_file(log);
  EXPECT_NE(read_file(out).find(fmt::format("calibrated from runs {},{} on", a, b)), std::string::npos);
  // And the simulator takes it.
  ASSERT_EQ(run_cli(fmt::format("run {}/samples/two_gemms_one_stream.hlo --backend sim --device {} --db {}",
                                SL_SOURCE_DIR, out, db_), log), 0) << read_file(log);
}

// A run's config says how many SMs its GEMMs beside a collective left free.
TEST_F(CalibrateCli, ReadsCommSmsFromTheRunConfig) {
  Result<sim::DeviceModel> truth = sim::load_device_model("h200");
  ASSERT_TRUE(truth.is_ok());
  truth->sm_limited_gemm_scale = 1.1;
  int64_t a = store_run("allgather_overlap_gemm.hlo", *truth, "cuda", 32);
  std::string out = (dir_ / "fitted.json").string();
  std::string log = (dir_ / "log.txt").string();
  ASSERT_EQ(run_cli(fmt::format("calibrate {} -o {} --db {}", a, out, db_), log), 0) << read_file(log);
  Result<sim::DeviceModel> fitted = sim::load_device_model(out);
  ASSERT_TRUE(fitted.is_ok()) << fitted.status().message();
  EXPECT_NEAR(fitted->sm_limited_gemm_scale, 1.1, 1.1 * 0.02) << read_file(log);
}

TEST_F(CalibrateCli, RefusesSimulatedRuns) {
  Result<sim::DeviceModel> model = sim::load_device_model("h200");
  ASSERT_TRUE(model.is_ok());
  int64_t id = store_run("two_gemms_one_stream.hlo", *model, "sim");
  std::string out = (dir_ / "fitted.json").string();
  std::string log = (dir_ / "log.txt").string();
  EXPECT_EQ(run_cli(fmt::format("calibrate {} -o {} --db {}", id, out, db_), log), 1);
  EXPECT_NE(read_file(log).find("sim backend"), std::string::npos) << read_file(log);
  EXPECT_FALSE(fs::exists(out));
}

// A device file with an absurd number is invalid input (exit 1), named in
// the message, and nothing is simulated with it.
TEST_F(CalibrateCli, OutOfRangeDeviceFileIsInvalidInput) {
  nlohmann::json j = nlohmann::json::parse(read_file(std::string(SL_SOURCE_DIR) + "/assets/devices/h200.json"));
  std::string log = (dir_ / "log.txt").string();
  for (const auto& [key, value] : {std::pair<const char*, double>{"kernel_launch_us", 1e300},
                                   std::pair<const char*, double>{"hbm_bandwidth_gbps", 1e-300}}) {
    nlohmann::json bad = j;
    bad[key] = value;
    std::string path = (dir_ / "bad.json").string();
    std::ofstream(path) << bad.dump(2);
    EXPECT_EQ(run_cli(fmt::format("run {}/samples/two_gemms_one_stream.hlo --backend sim --device {}", SL_SOURCE_DIR,
                                  path), log), 1) << read_file(log);
    EXPECT_NE(read_file(log).find(key), std::string::npos) << read_file(log);
    EXPECT_NE(read_file(log).find("physical range"), std::string::npos) << read_file(log);
  }
}

}  // namespace
}  // namespace sl

#endif  // SL_STREAMLENS
