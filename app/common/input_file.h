#pragma once
// Reading a user's input file (program, device file) with a size cap
// (README.md, "What streamlens promises"): a directory or a device node such as /dev/zero is
// refused before anything is read; a pipe is read up to the cap.

#include <cstdint>
#include <string>

#include "core/common/status.h"

namespace sl::app {

constexpr int64_t kMaxProgramBytes = int64_t{256} << 20;
constexpr int64_t kMaxDeviceFileBytes = int64_t{16} << 20;

// The whole file, or kInvalidInput naming it (`what`: "program", "device
// file") when it is no regular file or pipe, cannot be read, or holds more
// than max_bytes.
Result<std::string> read_input_file(const std::string& path, int64_t max_bytes, const char* what);

}  // namespace sl::app
