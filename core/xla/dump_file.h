#pragma once
// Reading one of XLA's dump files (thunk sequences, autotuning logs) whole,
// with a bound: a file far larger than any dump is refused before it is read.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/status.h"

namespace sl::xla {

// The file's bytes; kInvalidInput when it is no regular file, is larger than
// `max_bytes` ("PATH: larger than N MiB, not WHAT") or cannot be read.
Result<std::string> read_dump_file(const std::string& path, uintmax_t max_bytes, std::string_view what);

}  // namespace sl::xla
