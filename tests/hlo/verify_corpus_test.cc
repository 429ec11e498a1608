// The verifier never rejects what XLA accepted: every real JAX dump in
// tests/corpus/jax (before and after optimization) verifies clean, and the
// two-device programs declare their two partitions, so no count is inferred.

#include <gtest/gtest.h>

#include <filesystem>

#include "core/hlo/parser.h"
#include "core/hlo/verifier.h"

namespace sl::hlo {
namespace {

namespace fs = std::filesystem;

TEST(VerifyCorpus, EveryJaxDumpVerifies) {
  int verified = 0;
  for (const char* size : {"small", "large"}) {
    const fs::path root = fs::path(SL_SOURCE_DIR) / "tests/corpus/jax" / size;
    if (!fs::exists(root)) continue;
    for (const auto& dir : fs::directory_iterator(root)) {
      for (const auto& file : fs::directory_iterator(dir.path())) {
        const std::string name = file.path().filename().string();
        if (!name.ends_with("optimizations.txt")) continue;
        Result<Module> module = parse_program_file(file.path().string());
        ASSERT_TRUE(module.is_ok()) << module.status().message();
        std::vector<std::string> notes = settle_device_counts(*module, 0, 0);
        EXPECT_TRUE(notes.empty()) << file.path() << ": " << notes.front();
        std::vector<Diagnostic> diagnostics = verify(*module);
        EXPECT_TRUE(diagnostics.empty()) << format_diagnostics(diagnostics, module->source_text);
        const bool two_devices = name.find("fsdp") != std::string::npos || name.find("dp_step") != std::string::npos;
        if (two_devices) {
          EXPECT_TRUE(module->num_partitions_declared) << file.path();
          EXPECT_EQ(module->num_partitions, 2) << file.path();
        }
        ++verified;
      }
    }
  }
  EXPECT_GE(verified, 30);
}

}  // namespace
}  // namespace sl::hlo
