#pragma once
// Runs the streamlens binary as a child process and captures what it prints.

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sl::cli_test {

struct Outcome {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `args` is appended to the binary's path as shell words (tests quote them).
inline Outcome streamlens(const std::string& args, const std::filesystem::path& dir) {
  std::filesystem::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  std::string command = std::string(SL_STREAMLENS) + " " + args + " >" + out.string() + " 2>" + err.string() +
                        " </dev/null";
  int status = std::system(command.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = read_file(out);
  o.err = read_file(err);
  return o;
}

inline std::filesystem::path sample(const std::string& name) {
  return std::filesystem::path(SL_SOURCE_DIR) / "samples" / name;
}

}  // namespace sl::cli_test
