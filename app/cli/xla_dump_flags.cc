#include "app/cli/xla_dump_flags.h"

#include <filesystem>

namespace sl::cli {

Result<std::string> xla_flags_with_dump(const std::string& user_flags, const std::string& dump_dir) {
  if (user_flags.find("--xla_dump_to") != std::string::npos) {
    return usage_error("XLA_FLAGS already sets --xla_dump_to; drop it or drop --xla-dump");
  }
  std::string flags = (user_flags.empty() ? "" : user_flags + " ") + "--xla_dump_to=" + dump_dir +
                      " --xla_dump_hlo_as_text";
  if (user_flags.find("--xla_gpu_dump_autotune_logs_to") == std::string::npos) {
    flags += " --xla_gpu_dump_autotune_logs_to=" + (std::filesystem::path(dump_dir) / "autotune_logs.txt").string();
  }
  return flags;
}

}  // namespace sl::cli
