#pragma once
// A thin RAII layer over the SQLite C API for the store and the importer.
// Errors come back as Status naming the database file; nothing throws.

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/status.h"

namespace sl::trace::store {

class Statement;

class Database {
 public:
  Database() = default;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  ~Database();

  // flags: SQLITE_OPEN_READONLY or SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE.
  // `path` is always a file name, never an SQLite URI ("file:..." names a
  // file of that name in the current directory).
  static Result<Database> open(const std::string& path, int flags);
  // Read-only without locks or -wal/-shm files (SQLite's immutable=1): for a
  // file nobody writes, in a place where this process cannot create files.
  static Result<Database> open_immutable(const std::string& path);

  Status exec(const char* sql);
  Result<Statement> prepare(std::string_view sql);
  bool table_exists(std::string_view name);
  // An error Status for the last failure, classified: corrupt/not-a-database
  // are kInvalidInput, everything else kRuntime.
  Status error(std::string_view what) const;
  Status error_from(int rc, std::string_view what) const;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
  int changes() const { return sqlite3_changes(db_); }

 private:
  friend Result<Database> open_connection(const std::string& path, const std::string& name, int flags);
  sqlite3* db_ = nullptr;
  std::string path_;
};

// Opens `name` (a file name or URI, as given) reporting errors against `path`.
Result<Database> open_connection(const std::string& path, const std::string& name, int flags);

// A prepared statement, reusable: bind, step until done, reset.
class Statement {
 public:
  Statement() = default;
  Statement(const Database* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  ~Statement();

  // Indices are 1-based as in SQLite.
  void bind(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
  void bind(int index, std::string_view text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind_null(int index) { sqlite3_bind_null(stmt_, index); }
  // The blob must stay alive until the statement is reset (SQLITE_STATIC).
  void bind_blob(int index, std::string_view blob) {
    sqlite3_bind_blob(stmt_, index, blob.data(), static_cast<int>(blob.size()), SQLITE_STATIC);
  }

  // true: a row is available; false: done. Errors set *status.
  bool step(Status* status);
  // Runs to completion, ignoring rows; resets afterwards.
  Status run();
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  int64_t column_int(int index) const { return sqlite3_column_int64(stmt_, index); }
  int32_t column_int32(int index) const { return sqlite3_column_int(stmt_, index); }
  // Valid until the next step or reset.
  std::string_view column_blob(int index) const {
    const void* data = sqlite3_column_blob(stmt_, index);
    int bytes = sqlite3_column_bytes(stmt_, index);
    if (data == nullptr || bytes <= 0) return {};
    return {static_cast<const char*>(data), static_cast<size_t>(bytes)};
  }
  std::string column_text(int index) const;
  bool column_is_null(int index) const { return sqlite3_column_type(stmt_, index) == SQLITE_NULL; }

 private:
  const Database* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace sl::trace::store
