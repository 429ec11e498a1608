#pragma once
// The one place where library Status values become process exit codes
// (docs/cli.md): 0 ok, 1 invalid input, 2 usage, 3 runtime failure.

#include <cstdio>
#include <string>

#include "app/cli/terminal.h"
#include "core/common/status.h"

namespace sl::cli {

constexpr int kExitOk = 0;
constexpr int kExitInvalidInput = 1;
constexpr int kExitUsage = 2;
constexpr int kExitRuntime = 3;

inline int exit_code_for(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kOk: return kExitOk;
    case ErrorCode::kInvalidInput: return kExitInvalidInput;
    case ErrorCode::kNotFound: return kExitInvalidInput;
    case ErrorCode::kUsage: return kExitUsage;
    case ErrorCode::kRuntime: return kExitRuntime;
  }
  return kExitRuntime;
}

// Prints the message to stderr (prefixed unless it already is a located
// diagnostic) and returns the exit code.
inline int fail(const Status& status) {
  const std::string& m = status.message();
  bool located = m.find(": error: ") != std::string::npos;
  print_text(stderr, (located ? "" : "streamlens: error: ") + m + "\n");
  return exit_code_for(status);
}

}  // namespace sl::cli
