#include "core/trace/store/sqlite_db.h"

#include <fmt/format.h>

#include <cctype>
#include <utility>

namespace sl::trace::store {

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    if (db_) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Database::~Database() {
  if (db_) sqlite3_close_v2(db_);
}

namespace {

// Builds where SQLite treats "file:..." names as URIs even without
// SQLITE_OPEN_URI; "./file:x" is the same file and never a URI.
std::string plain_file_name(const std::string& path) {
  if (path.rfind("file:", 0) == 0) return "./" + path;
  return path;
}

// RFC 3986 percent-encoding of a path for a file: URI.
std::string uri_path(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

}  // namespace

Result<Database> open_connection(const std::string& path, const std::string& name, int flags) {
  Database db;
  db.path_ = path;
  int rc = sqlite3_open_v2(name.c_str(), &db.db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) return db.error_from(rc, "cannot open the database");
  sqlite3_extended_result_codes(db.db_, 1);
  sqlite3_busy_timeout(db.db_, 10000);
  return db;
}

Result<Database> Database::open(const std::string& path, int flags) {
  return open_connection(path, plain_file_name(path), flags & ~SQLITE_OPEN_URI);
}

Result<Database> Database::open_immutable(const std::string& path) {
  return open_connection(path, "file:" + uri_path(path) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
}

Status Database::error_from(int rc, std::string_view what) const {
  const char* detail = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  std::string message = fmt::format("{}: {}: {}", path_, what, detail);
  int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) return invalid_input(std::move(message));
  if (primary == SQLITE_CANTOPEN) return not_found(std::move(message));
  return runtime_error(std::move(message));
}

Status Database::error(std::string_view what) const {
  return error_from(db_ ? sqlite3_extended_errcode(db_) : SQLITE_ERROR, what);
}

Status Database::exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (err) sqlite3_free(err);
  if (rc != SQLITE_OK) return error_from(rc, "statement failed");
  return ok_status();
}

Result<Statement> Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                              nullptr);
  if (rc != SQLITE_OK) return error_from(rc, fmt::format("cannot prepare `{}`", sql.substr(0, 60)));
  return Statement(this, stmt);
}

bool Database::table_exists(std::string_view name) {
  auto stmt = prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?");
  if (!stmt) return false;
  stmt->bind(1, name);
  Status status;
  return stmt->step(&status);
}

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_) sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

bool Statement::step(Status* status) {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) *status = db_->error_from(rc, "query failed");
  return false;
}

Status Statement::run() {
  Status status;
  while (step(&status)) {
  }
  reset();
  return status;
}

std::string Statement::column_text(int index) const {
  const unsigned char* text = sqlite3_column_text(stmt_, index);
  if (!text) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt_, index)));
}

}  // namespace sl::trace::store
