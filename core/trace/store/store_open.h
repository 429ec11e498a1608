#pragma once
// Deciding whether a file may be opened as a streamlens store, before
// anything is written to it (docs/store.md: foreign, corrupt or newer
// files are refused and left byte-identical).

#include <cstdint>
#include <string>

#include "core/common/status.h"

namespace sl::trace::store {

enum class FileState {
  kMissing,     // no such file
  kEmpty,       // zero bytes, or an SQLite database without any table
  kStreamlens,  // ours, with a schema version this build reads
};

// Inspects `path` through a read-only connection. Errors (kInvalidInput, naming
// the file) for: not SQLite, corrupt, someone else's tables, newer schema.
// For kStreamlens, *schema_version (when given) receives the file's version.
Result<FileState> inspect_file(const std::string& path, int64_t* schema_version = nullptr);

// A database is named by a plain file path: an empty name, ":memory:" or an
// SQLite URI ("file:...") is a usage error (it would save nothing, or write
// into whatever file the URI names).
Status check_plain_path(const std::string& path);

}  // namespace sl::trace::store
