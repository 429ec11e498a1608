// Every sample program (samples/*.hlo) lowers and simulates at full size on
// the H200 model through the sim backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

#include "core/hlo/parser.h"
#include "core/sched/lowering.h"
#include "sim/sim_backend.h"

namespace sl::sim {
namespace {

std::vector<std::string> sample_files() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(SL_SOURCE_DIR) + "/samples", ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".hlo") out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Samples, EverySampleSimulatesAtFullSize) {
  std::vector<std::string> files = sample_files();
  if (files.empty()) GTEST_SKIP() << "no samples/*.hlo yet";
  Result<DeviceModel> model = load_device_model("h200");
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  auto backend = make_sim_backend(*model);
  EXPECT_EQ(backend->name(), "sim");
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    Result<hlo::Module> module = hlo::parse_program_file(file);
    ASSERT_TRUE(module.is_ok()) << module.status().message();
    Result<sched::LoweredProgram> lowered = sched::lower(*module, {});
    ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
    Result<exec::RunOutput> out = backend->run(*lowered, {});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    const trace::Trace& t = out->trace;

    // One event per kernel, GEMM and collective thunk, on every device.
    size_t work = 0;
    for (const auto& d : lowered->devices) {
      for (const auto& th : d.thunks) {
        work += th.kind != sched::ThunkKind::kRecordEvent && th.kind != sched::ThunkKind::kWaitEvent;
      }
    }
    size_t non_wait = static_cast<size_t>(std::count_if(
        t.events.begin(), t.events.end(), [](const trace::Event& e) { return e.kind != trace::EventKind::kWait; }));
    EXPECT_EQ(non_wait, work);
    EXPECT_GT(t.makespan_ns(), 0);
    EXPECT_NE(out->device_description.find("h200"), std::string::npos);

    // A stream runs one thing at a time.
    std::map<std::pair<int32_t, int32_t>, std::vector<std::pair<int64_t, int64_t>>> spans;
    for (const trace::Event& e : t.events) {
      EXPECT_LE(e.start_ns, e.end_ns);
      EXPECT_GE(e.start_ns, 0);
      // Every launch names its instruction; a wait for SMs is no launch's.
      EXPECT_TRUE(!t.instruction_of(e).empty() || t.name_of(e) == "wait for SMs held by a GEMM");
      spans[{e.device, e.stream}].emplace_back(e.start_ns, e.end_ns);
    }
    for (auto& [track, list] : spans) {
      std::sort(list.begin(), list.end());
      for (size_t i = 1; i < list.size(); ++i) {
        EXPECT_LE(list[i - 1].second, list[i].first) << "overlap on device " << track.first << " stream " << track.second;
      }
    }
  }
}

TEST(Samples, IterationsRepeatBackToBack) {
  std::vector<std::string> files = sample_files();
  if (files.empty()) GTEST_SKIP() << "no samples/*.hlo yet";
  Result<hlo::Module> module = hlo::parse_program_file(files.front());
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  Result<sched::LoweredProgram> lowered = sched::lower(*module, {});
  ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
  auto backend = make_sim_backend(*load_device_model("h200"));
  exec::RunOptions options;
  Result<exec::RunOutput> one = backend->run(*lowered, options);
  options.iterations = 3;
  Result<exec::RunOutput> three = backend->run(*lowered, options);
  ASSERT_TRUE(one.is_ok() && three.is_ok());
  EXPECT_EQ(three->trace.events.size(), 3 * one->trace.events.size());
  EXPECT_EQ(three->trace.makespan_ns(), 3 * one->trace.makespan_ns());
  EXPECT_EQ(three->trace.events.back().iteration, 2);
}

}  // namespace
}  // namespace sl::sim
