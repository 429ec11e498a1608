// Every small sample program runs on the CPU backend on all its devices and
// yields one result per ROOT leaf.

#include <gtest/gtest.h>

#include <filesystem>

#include "core/exec/cpu/cpu_backend.h"
#include "core/hlo/parser.h"

namespace sl::exec {
namespace {

TEST(Samples, SmallProgramsRunOnTheCpuBackend) {
  const std::filesystem::path dir = std::filesystem::path(SL_SOURCE_DIR) / "samples" / "small";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no " << dir;
  int ran = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".hlo") continue;
    SCOPED_TRACE(entry.path().string());
    auto module = hlo::parse_program_file(entry.path().string());
    ASSERT_TRUE(module.is_ok()) << module.status().message();
    RunOptions options;
    options.collect_results = true;
    auto out = run_cpu(*module, 0, 0, options);
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    ASSERT_EQ(out->results.size(), static_cast<size_t>(module->device_count()));
    const hlo::Computation& main = module->entry_computation();
    const size_t leaves = main.instructions[static_cast<size_t>(main.root)].shape.leaves().size();
    for (const DeviceResults& d : out->results) EXPECT_EQ(d.outputs.size(), leaves);
    EXPECT_FALSE(out->trace.events.empty());
    ++ran;
  }
  EXPECT_GT(ran, 0);
}

}  // namespace
}  // namespace sl::exec
