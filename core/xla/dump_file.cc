#include "core/xla/dump_file.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sl::xla {

Result<std::string> read_dump_file(const std::string& path, uintmax_t max_bytes, std::string_view what) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return invalid_input(fmt::format("{}: not a regular file", path));
  if (std::filesystem::file_size(path, ec) > max_bytes) {
    return invalid_input(fmt::format("{}: larger than {} MiB, not {}", path, max_bytes >> 20, what));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalid_input(fmt::format("{}: cannot be read", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace sl::xla
