// The CUDA backend as users reach it: through the on-demand plugin
// libstreamlens_cuda.so (app/common/cuda_plugin.h), in this process and from
// the streamlens binary. Loading needs no GPU; the runs skip without one.
#include "app/common/cuda_plugin.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/exec/cpu/cpu_backend.h"
#include "core/hlo/parser.h"
#include "core/sched/lowering.h"

namespace sl::app {
namespace {

namespace fs = std::filesystem;

// The build's layout, found from this executable (BUILD/tests/plugin_tests), so
// the tests work where the build was copied to (the GPU machine).
fs::path build_dir() {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path().parent_path();
}

// The sample, from the source tree this was built from, or else from the
// working directory (a copy of the repository run from its root).
std::string small_sample() {
  const fs::path rel = "samples/small/two_gemms_one_stream.hlo";
  if (fs::exists(fs::path(SL_SOURCE_DIR) / rel)) return (fs::path(SL_SOURCE_DIR) / rel).string();
  return (fs::current_path() / rel).string();
}

class PluginEnv : public ::testing::Environment {
 public:
  void SetUp() override {
    const fs::path plugin = build_dir() / "libstreamlens_cuda.so";
    if (std::getenv("STREAMLENS_CUDA_PLUGIN") == nullptr && fs::exists(plugin)) {
      setenv("STREAMLENS_CUDA_PLUGIN", plugin.c_str(), 1);
    }
  }
};
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new PluginEnv);

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CudaPlugin, LoadsWithoutAGpu) {
  Result<const CudaPlugin*> plugin = cuda_plugin();
  ASSERT_TRUE(plugin.is_ok()) << plugin.status().message();
  EXPECT_EQ((*plugin)->abi, kCudaPluginAbi);
  ASSERT_NE((*plugin)->make_backend, nullptr);
  EXPECT_GE((*plugin)->device_count(), 0);
}

TEST(CudaPlugin, BackendMatchesCpu) {
  Result<const CudaPlugin*> plugin = cuda_plugin();
  ASSERT_TRUE(plugin.is_ok()) << plugin.status().message();
  if ((*plugin)->device_count() == 0) GTEST_SKIP() << "no GPU";
  auto module = hlo::parse_program(read_text(small_sample()), "two_gemms_one_stream.hlo");
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  auto lowered = sched::lower(*module, {});
  ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
  exec::RunOptions options;
  options.collect_results = true;
  auto cpu = exec::run_cpu(*module, 0, 0, options);
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  auto backend = (*plugin)->make_backend(exec::CudaOptions{});
  ASSERT_TRUE(backend.is_ok()) << backend.status().message();
  auto cuda = (*backend)->run(*lowered, options);
  ASSERT_TRUE(cuda.is_ok()) << cuda.status().message();
  EXPECT_FALSE(cuda->trace.events.empty());
  ASSERT_EQ(cuda->results.size(), cpu->results.size());
  for (size_t d = 0; d < cpu->results.size(); ++d) {
    ASSERT_EQ(cuda->results[d].outputs.size(), cpu->results[d].outputs.size());
    for (size_t l = 0; l < cpu->results[d].outputs.size(); ++l) {
      const auto& want = cpu->results[d].outputs[l].values;
      const auto& got = cuda->results[d].outputs[l].values;
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-3 * (1 + std::fabs(want[i])));
    }
  }
}

// `streamlens run --backend cuda` loads the plugin itself and records a cuda run.
TEST(CudaPlugin, CliRunsOnTheCudaBackend) {
  Result<const CudaPlugin*> plugin = cuda_plugin();
  ASSERT_TRUE(plugin.is_ok()) << plugin.status().message();
  if ((*plugin)->device_count() == 0) GTEST_SKIP() << "no GPU";
  const fs::path dir = fs::temp_directory_path() / ("sl_cuda_plugin_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string command = (build_dir() / "app/cli/streamlens").string() + " run " + small_sample() +
                              " --backend cuda --json --db " +
                              (dir / "run.db").string() + " >" + (dir / "out.json").string() + " 2>" +
                              (dir / "err.txt").string();
  const int status = std::system(command.c_str());
  const std::string err = read_text(dir / "err.txt");
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << err;
  nlohmann::json out = nlohmann::json::parse(read_text(dir / "out.json"), nullptr, false);
  fs::remove_all(dir);
  ASSERT_FALSE(out.is_discarded()) << err;
  EXPECT_EQ(out.value("backend", ""), "cuda");
  EXPECT_GT(out.value("makespan_ns", int64_t{0}), 0);
  EXPECT_FALSE(out["events"].empty());
}

}  // namespace
}  // namespace sl::app
