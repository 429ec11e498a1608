// capture --xla-dump DIR: the XLA_FLAGS the captured command gets.

#include "app/cli/xla_dump_flags.h"

#include <gtest/gtest.h>

namespace sl::cli {
namespace {

TEST(XlaDumpFlags, TheUsersFlagsComeFirstThenTheDumpAndTheAutotuningLog) {
  auto flags = xla_flags_with_dump("--xla_gpu_enable_triton_gemm=false", "/tmp/d");
  ASSERT_TRUE(flags.is_ok()) << flags.status().message();
  EXPECT_EQ(*flags,
            "--xla_gpu_enable_triton_gemm=false --xla_dump_to=/tmp/d --xla_dump_hlo_as_text "
            "--xla_gpu_dump_autotune_logs_to=/tmp/d/autotune_logs.txt");
  auto alone = xla_flags_with_dump("", "d");
  ASSERT_TRUE(alone.is_ok());
  EXPECT_EQ(*alone, "--xla_dump_to=d --xla_dump_hlo_as_text --xla_gpu_dump_autotune_logs_to=d/autotune_logs.txt");
}

TEST(XlaDumpFlags, TheUsersOwnAutotuningLogIsKept) {
  auto flags = xla_flags_with_dump("--xla_gpu_dump_autotune_logs_to=/mine.pb", "/tmp/d");
  ASSERT_TRUE(flags.is_ok());
  EXPECT_EQ(*flags, "--xla_gpu_dump_autotune_logs_to=/mine.pb --xla_dump_to=/tmp/d --xla_dump_hlo_as_text");
}

TEST(XlaDumpFlags, AUsersDumpFolderIsAUsageErrorNotOverridden) {
  auto flags = xla_flags_with_dump("--xla_dump_to=/elsewhere", "/tmp/d");
  ASSERT_FALSE(flags.is_ok());
  EXPECT_EQ(flags.status().code(), ErrorCode::kUsage);
}

}  // namespace
}  // namespace sl::cli
