// Every kLoop and kInput fusion of the JAX after-optimizations dumps
// (tests/corpus/jax/{small,large}) through the generator and NVRTC, to PTX
// for sm_90 (no GPU needed). The counts are pinned: a fusion that stops
// generating or compiling fails, and so does one that starts to (update the
// numbers, and docs/codegen.md, with it).

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include <unistd.h>

#include "core/exec/codegen/fusion_codegen.h"
#include "core/exec/nvrtc/nvrtc_compiler.h"
#include "core/hlo/parser.h"

namespace sl::exec {
namespace {

namespace fs = std::filesystem;

struct Counts {
  int total = 0, generated = 0, compiled = 0;
};

TEST(CorpusCodegen, LoopAndInputFusionsGenerateAndCompile) {
  std::map<std::string, Counts> by_kind;
  std::map<std::string, int> reasons;  // first words of the fallback reason
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
            if (inst.opcode != hlo::Opcode::kFusion || !codegen::generates_kind(inst.fusion_kind)) continue;
            Counts& n = by_kind[inst.fusion_kind];
            ++n.total;
            auto kernel = codegen::generate_fusion_kernel(*module, inst);
            if (!kernel.is_ok()) {
              const std::string& m = kernel.status().message();
              const size_t colon = m.find(": ");
              std::string why = colon == std::string::npos ? m : m.substr(colon + 2);
              ++reasons[why.substr(0, why.find(" '"))];
              continue;
            }
            ++n.generated;
            if (std::getenv("SL_CODEGEN_SIZES")) {  // generation only: source sizes, for finding a blow-up
              std::printf("%zu %s %s\n", kernel->source.size(), file.path().filename().c_str(), inst.name.c_str());
              continue;
            }
            auto ptx = nvrtc::compile(kernel->source, kernel->name, {.arch = "compute_90", .cache_dir = ""});
            EXPECT_TRUE(ptx.is_ok()) << file.path() << " " << inst.name << ": " << ptx.status().message();
            if (ptx.is_ok()) ++n.compiled;
          }
        }
      }
    }
  }
  for (const auto& [kind, n] : by_kind) {
    std::printf("%s: %d fusions, %d generated, %d compiled\n", kind.c_str(), n.total, n.generated, n.compiled);
    RecordProperty(kind + "_generated", n.generated);
  }
  for (const auto& [why, count] : reasons) std::printf("fallback x%d: %s\n", count, why.c_str());
  EXPECT_EQ(by_kind["kLoop"].total, 156);
  EXPECT_EQ(by_kind["kInput"].total, 71);
  EXPECT_EQ(by_kind["kLoop"].generated, 146);  // fallbacks: gather, scatter, dot, a type-changing bitcast
  EXPECT_EQ(by_kind["kInput"].generated, 38);   // most kInput fallbacks are scatter / gather fusions
  EXPECT_EQ(by_kind["kLoop"].compiled, by_kind["kLoop"].generated);
  EXPECT_EQ(by_kind["kInput"].compiled, by_kind["kInput"].generated);
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
