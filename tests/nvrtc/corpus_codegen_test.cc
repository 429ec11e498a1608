// Every fusion of the JAX after-optimizations dumps
// (tests/corpus/jax/{small,large}) planned, and its generated kernels
// through NVRTC, to PTX for sm_90 (no GPU needed).

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include <unistd.h>

#include "core/exec/codegen/fusion_plan.h"
#include "core/exec/nvrtc/nvrtc_compiler.h"
#include "core/hlo/parser.h"

namespace sl::exec {
namespace {

namespace fs = std::filesystem;

// Every generated kernel of every fusion's plan (core/exec/codegen/
// fusion_plan.h: hoisted reduces, scatter kernels, GEMM prologues and
// epilogues included) compiles. Which fusions take which path is pinned by
// tests/codegen/fusion_plan_test.cc; here the kernel count is.
TEST(CorpusCodegen, EveryPlannedKernelCompiles) {
  std::map<std::string, int> kernels;  // path -> kernels
  int compiled = 0, total = 0;
  for (const char* size : {"small", "large"}) {
    const fs::path dir = fs::path(SL_SOURCE_DIR) / "tests/corpus/jax" / size;
    ASSERT_TRUE(fs::exists(dir)) << dir;
    for (const auto& program : fs::directory_iterator(dir)) {
      for (const auto& file : fs::directory_iterator(program.path())) {
        const std::string name = file.path().filename().string();
        if (name.find("after_optimizations.txt") == std::string::npos) continue;
        auto module = hlo::parse_program_file(file.path().string());
        ASSERT_TRUE(module.is_ok()) << file.path() << ": " << module.status().message();
        for (const hlo::Computation& c : module->computations) {
          for (const hlo::Instruction& inst : c.instructions) {
            if (inst.opcode != hlo::Opcode::kFusion) continue;
            const codegen::FusionPlan plan = codegen::plan_fusion(*module, inst);
            for (const codegen::FusionStep& step : plan.steps) {
              if (step.is_gemm) continue;
              ++total;
              ++kernels[codegen::fusion_path_name(plan.path)];
              if (std::getenv("SL_CODEGEN_SIZES")) {  // generation only: source sizes, for finding a blow-up
                std::printf("%zu %s %s\n", step.kernel.source.size(), name.c_str(), step.kernel.name.c_str());
                continue;
              }
              auto ptx = nvrtc::compile(step.kernel.source, step.kernel.name, {.arch = "compute_90", .cache_dir = ""});
              EXPECT_TRUE(ptx.is_ok()) << file.path() << " " << step.kernel.name << ": " << ptx.status().message();
              if (ptx.is_ok()) ++compiled;
            }
          }
        }
      }
    }
  }
  for (const auto& [path, n] : kernels) std::printf("%s: %d kernels\n", path.c_str(), n);
  EXPECT_EQ(compiled, total);
  // 4 attention scales of GEMM operands run as alpha, no prologue; 35
  // softmax-like reduces computed by the warp of their row, not hoisted.
  EXPECT_EQ(total, 322);
}

TEST(NvrtcCache, SecondCompileIsACacheHitWithTheSameBinary) {
  const fs::path dir = fs::temp_directory_path() / ("sl_nvrtc_cache_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string src = "extern \"C\" __global__ void k(float* o) { o[threadIdx.x] = 1.0f; }\n";
  auto first = nvrtc::compile(src, "k", {.arch = "compute_90", .cache_dir = dir.string()});
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  EXPECT_FALSE(first->from_cache);
  auto second = nvrtc::compile(src, "k", {.arch = "compute_90", .cache_dir = dir.string()});
  ASSERT_TRUE(second.is_ok()) << second.status().message();
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(first->binary, second->binary);
  auto other = nvrtc::compile(src, "k", {.arch = "sm_90", .cache_dir = dir.string()});
  ASSERT_TRUE(other.is_ok()) << other.status().message();
  EXPECT_FALSE(other->from_cache);  // the arch is part of the key
  fs::remove_all(dir);
}

TEST(NvrtcCache, ACompileErrorReturnsTheLog) {
  auto bad = nvrtc::compile("extern \"C\" __global__ void k() { undefined_thing(); }\n", "bad", {.arch = "compute_90", .cache_dir = ""});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("undefined_thing"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace sl::exec
