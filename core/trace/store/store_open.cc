#include "core/trace/store/store_open.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/trace/store/schema.h"
#include "core/trace/store/sqlite_db.h"
#include "core/trace/store/sqlite_trace_store.h"

namespace sl::trace::store {
namespace {

constexpr char kSqliteMagic[] = "SQLite format 3";  // 16 bytes with the NUL

Status not_ours(const std::string& path, std::string_view why) {
  return invalid_input(fmt::format("{}: not a streamlens database ({})", path, why));
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Whether this process may write `path` and create files beside it.
bool can_write_beside(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return ::access(path.c_str(), W_OK) == 0 && ::access(dir.empty() ? "." : dir.c_str(), W_OK) == 0;
}

// A reader must never leave -wal/-shm files behind that stop the owner
// writing (SQLite creates them with the reader's ownership), and must work
// where it cannot create them (read-only mounts, 0555 directories).
//  - The owner, where it may write: a read-write connection (the caller sets
//    query_only), so the last connection to close removes the files and a
//    long-lived reader (the GUI) sees runs recorded after it opened.
//  - Anyone else, with no -wal file: every committed transaction is in the
//    main file; read it as immutable, creating nothing (a snapshot).
//  - Anyone else, with a -wal file (a writer at work, or one that died):
//    read through the files that are already there.
Result<Database> open_for_reading(const std::string& path, bool* read_write) {
  struct stat st {};
  const bool owner = ::stat(path.c_str(), &st) == 0 && st.st_uid == ::geteuid();
  *read_write = owner && can_write_beside(path);
  if (*read_write) return Database::open(path, SQLITE_OPEN_READWRITE);
  if (!exists(path + "-wal")) return Database::open_immutable(path);
  SL_ASSIGN_OR_RETURN(Database db, Database::open(path, SQLITE_OPEN_READONLY));
  // A -wal left on a read-only mount without a usable -shm cannot be read
  // through; the main file still holds every checkpointed run.
  auto probe = db.prepare("SELECT 1 FROM sqlite_master LIMIT 1");
  Status status;
  if (probe) probe->step(&status);
  if (probe && status.is_ok()) return db;
  return Database::open_immutable(path);
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

  bool read_write = false;
  SL_ASSIGN_OR_RETURN(Database db, open_for_reading(path, &read_write));
  if (read_write) SL_RETURN_IF_ERROR(db.exec("PRAGMA query_only = 1"));
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

namespace {

// Creates the schema in a new file, or brings an older streamlens file up to
// this version (every statement of schema.sql is IF NOT EXISTS; version 1
// lacks only event_chunks).
Status initialize_schema(Database& db, bool fresh) {
  SL_RETURN_IF_ERROR(db.exec("BEGIN IMMEDIATE"));
  Status status = db.exec(kSchemaSql);
  if (status.is_ok()) {
    std::string meta = fresh ? fmt::format(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('application', '{}'), ('schema_version', '{}'), "
        "('created_at', '{}')",
        kApplicationId, kSchemaVersion, now_iso8601())
                             : fmt::format("UPDATE meta SET value = '{}' WHERE key = 'schema_version'",
                                           kSchemaVersion);
    status = db.exec(meta.c_str());
  }
  if (status.is_ok()) return db.exec("COMMIT");
  db.exec("ROLLBACK");
  return status;
}

}  // namespace

Status check_plain_path(const std::string& path) {
  if (path.empty()) return usage_error("--db: the database file name is empty");
  if (path == ":memory:" || path.rfind("file:", 0) == 0) {
    return usage_error(fmt::format(
        "--db {}: a database is a plain file path, not an SQLite URI or special name (write ./{} for a file of "
        "that name)",
        path, path));
  }
  return ok_status();
}

}  // namespace sl::trace::store

namespace sl::trace {

Result<std::unique_ptr<TraceStore>> TraceStore::open(const std::string& path, Mode mode) {
  SL_RETURN_IF_ERROR(store::check_plain_path(path));
  int64_t version = 0;
  SL_ASSIGN_OR_RETURN(store::FileState state, store::inspect_file(path, &version));
  if (state == store::FileState::kMissing && mode != Mode::kCreateIfMissing) {
    return not_found(fmt::format("{}: no such database", path));
  }
  if (state != store::FileState::kStreamlens && mode == Mode::kReadOnly) {
    return invalid_input(fmt::format("{}: not a streamlens database (empty)", path));
  }
  const bool read_only = mode == Mode::kReadOnly;
  bool read_write = false;
  Result<store::Database> opened = read_only ? store::open_for_reading(path, &read_write)
                                             : store::Database::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!opened) return opened.status();
  store::Database db = std::move(opened).value();
  if (read_only) {
    SL_RETURN_IF_ERROR(db.exec("PRAGMA query_only = 1"));
  } else {
    // Only our own (or new, empty) files reach this point: writing is safe.
    SL_RETURN_IF_ERROR(db.exec("PRAGMA journal_mode = WAL"));
    SL_RETURN_IF_ERROR(db.exec("PRAGMA synchronous = NORMAL"));
    if (state != store::FileState::kStreamlens) {
      SL_RETURN_IF_ERROR(store::initialize_schema(db, true));
    } else if (version < store::kSchemaVersion) {
      SL_RETURN_IF_ERROR(store::initialize_schema(db, false));
    }
  }
  SL_RETURN_IF_ERROR(db.exec(store::kCacheSizePragma));
  auto store = std::make_unique<store::SqliteTraceStore>(std::move(db), read_only);
  SL_RETURN_IF_ERROR(store->prepare_statements());
  return std::unique_ptr<TraceStore>(std::move(store));
}

}  // namespace sl::trace
