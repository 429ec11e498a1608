#include "app/cli/output_guard.h"

#include <filesystem>

namespace sl::cli {
namespace {

bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code ec;
  if (std::filesystem::equivalent(a, b, ec) && !ec) return true;
  // Not there yet (a -wal file, say): compare where the names point.
  std::error_code ea, eb;
  auto pa = std::filesystem::weakly_canonical(a, ea);
  auto pb = std::filesystem::weakly_canonical(b, eb);
  return !ea && !eb && pa == pb;
}

}  // namespace

Status refuse_overwrite(const std::string& out, const std::string& database,
                        const std::vector<std::string>& inputs) {
  if (!database.empty()) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      if (same_file(out, database + suffix)) {
        return usage_error(out + " is the database " + database + (*suffix ? " (its " + std::string(suffix + 1) +
                           " file)" : std::string()) + "; refusing to write over it (choose another output file)");
      }
    }
  }
  for (const std::string& input : inputs) {
    if (same_file(out, input)) {
      return usage_error(out + " is the input " + input + "; refusing to write over it (choose another output file)");
    }
  }
  return ok_status();
}

}  // namespace sl::cli
