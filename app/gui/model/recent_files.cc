#include "app/gui/model/recent_files.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace sl::gui {

std::string recent_files_path() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/streamlens/recent_databases";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.config/streamlens/recent_databases";
  }
  return "";
}

std::vector<std::string> load_recent_files(const std::string& path) {
  std::vector<std::string> files;
  if (path.empty()) return files;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) files.push_back(line);
  }
  return files;
}

void save_recent_files(const std::string& path, const std::vector<std::string>& files) {
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::ofstream out(path, std::ios::trunc);
  for (const auto& f : files) out << f << '\n';  // best effort: a read-only home just loses the list
}

std::string startup_database(const std::string& dir, const std::vector<std::string>& recent) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path local = fs::path(dir) / "streamlens.db";
  if (fs::is_regular_file(local, ec)) return local.string();
  for (const std::string& path : recent) {
    if (fs::is_regular_file(path, ec)) return path;
  }
  return "";
}

}  // namespace sl::gui
