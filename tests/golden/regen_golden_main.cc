// scripts/regen-golden: rewrites tests/data/golden from the current code and
// removes golden files whose program is gone. Usage: golden_regen SOURCE_DIR

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "tests/golden/golden_text.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SOURCE_DIR\n", argv[0]);
    return 2;
  }
  const std::string source = argv[1];
  std::set<std::string> written;
  for (const sl::golden::Case& c : sl::golden::list_cases(source)) {
    const fs::path path = fs::path(source) / c.golden;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << sl::golden::golden_text(source, c);
    written.insert(fs::weakly_canonical(path).string());
  }
  const fs::path root = fs::path(source) / "tests/data/golden";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && entry.path().extension() == ".txt" &&
        !written.count(fs::weakly_canonical(entry.path()).string())) {
      std::printf("removed %s\n", entry.path().string().c_str());
      fs::remove(entry.path());
    }
  }
  std::printf("wrote %zu golden files under %s\n", written.size(), root.string().c_str());
  return 0;
}
