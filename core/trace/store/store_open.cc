#include "core/trace/store/store_open.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "core/trace/store/schema.h"
#include "core/trace/store/sqlite_db.h"

namespace sl::trace::store {
namespace {

constexpr char kSqliteMagic[] = "SQLite format 3";  // 16 bytes with the NUL

Status not_ours(const std::string& path, std::string_view why) {
  return invalid_input(fmt::format("{}: not a streamlens database ({})", path, why));
}

Result<std::vector<std::string>> table_names(Database& db) {
  SL_ASSIGN_OR_RETURN(Statement stmt,
                      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"));
  std::vector<std::string> names;
  Status status;
  while (stmt.step(&status)) names.push_back(stmt.column_text(0));
  if (!status.is_ok()) {
    return invalid_input(fmt::format("{}: corrupt or unreadable database: {}", db.path(), status.message()));
  }
  return names;
}

}  // namespace

Result<FileState> inspect_file(const std::string& path, int64_t* schema_version) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return FileState::kMissing;
  if (!S_ISREG(st.st_mode)) return invalid_input(fmt::format("{}: not a regular file", path));
  if (st.st_size == 0) return FileState::kEmpty;

  // Check the header ourselves: SQLite would happily treat some garbage as
  // an empty database until its first write.
  char header[16] = {};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return runtime_error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  size_t got = std::fread(header, 1, sizeof header, f);
  std::fclose(f);
  if (got < sizeof header || std::memcmp(header, kSqliteMagic, sizeof header) != 0) {
    return invalid_input(fmt::format("{}: not an SQLite database (bad header)", path));
  }

  SL_ASSIGN_OR_RETURN(Database db, Database::open(path, SQLITE_OPEN_READONLY));
  auto names = table_names(db);
  if (!names) return names.status();
  if (names->empty()) return FileState::kEmpty;

  bool has_meta = false;
  for (const std::string& n : *names) has_meta |= n == "meta";
  if (!has_meta) {
    std::string listed;
    for (size_t i = 0; i < names->size() && i < 5; ++i) listed += (i ? ", " : "") + (*names)[i];
    if (names->size() > 5) listed += ", ...";
    return not_ours(path, fmt::format("it holds tables {} but no streamlens meta table", listed));
  }

  auto stmt = db.prepare("SELECT key, value FROM meta WHERE key IN ('application', 'schema_version')");
  if (!stmt) return not_ours(path, "its meta table has no key/value columns");
  std::string application;
  std::string version_text;
  Status status;
  while (stmt->step(&status)) {
    (stmt->column_text(0) == "application" ? application : version_text) = stmt->column_text(1);
  }
  if (!status.is_ok()) {
    return invalid_input(fmt::format("{}: corrupt or unreadable database: {}", path, status.message()));
  }
  if (application != kApplicationId) return not_ours(path, "its meta table does not name streamlens");

  char* end = nullptr;
  long long version = std::strtoll(version_text.c_str(), &end, 10);
  if (version_text.empty() || *end != '\0' || version < 1) {
    return invalid_input(fmt::format("{}: corrupt streamlens database (schema_version '{}')", path, version_text));
  }
  if (version > kSchemaVersion) {
    return invalid_input(fmt::format(
        "{}: written by a newer streamlens (schema version {}; this build reads up to {})", path, version,
        kSchemaVersion));
  }
  std::vector<std::string> required = {"runs", "events", "strings", "programs", "dependencies", "counters",
                                       "stream_assignments"};
  if (version >= 2) required.push_back("event_chunks");
  for (const std::string& table : required) {
    bool found = false;
    for (const std::string& n : *names) found |= n == table;
    if (!found) {
      return invalid_input(fmt::format("{}: damaged streamlens database (table {} is missing)", path, table));
    }
  }
  if (schema_version != nullptr) *schema_version = version;
  return FileState::kStreamlens;
}

}  // namespace sl::trace::store
