// `streamlens query [--db F] SQL [--csv|--json]`: one SQL statement over the
// store, with every event reachable through the `events` virtual table
// (docs/store.md). The database is opened for reading only: an authorizer
// admits reads and nothing else, so no statement can change or attach files.

#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/exit_codes.h"
#include "core/trace/store/events_vtab.h"
#include "core/trace/store/sqlite_db.h"
#include "core/trace/store/store_open.h"

namespace sl::cli {
namespace {

using trace::store::Database;

bool can_write_beside(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return ::access(path.c_str(), W_OK) == 0 && ::access(dir.empty() ? "." : dir.c_str(), W_OK) == 0;
}

// Reads only: SELECT, reading tables and views, functions, CTEs, and the
// pragmas that describe tables.
int authorize(void*, int action, const char* arg1, const char*, const char*, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_PRAGMA: {
      std::string_view name = arg1 ? arg1 : "";
      for (std::string_view ok : {"table_info", "table_xinfo", "table_list", "index_list", "index_info"}) {
        if (name == ok) return SQLITE_OK;
      }
      return SQLITE_DENY;
    }
    default:
      return SQLITE_DENY;
  }
}

Result<Database> open_for_query(const std::string& path) {
  if (path.empty() || path == ":memory:" || path.starts_with("file:")) {
    return usage_error(fmt::format("--db takes a file path, not '{}'", path));
  }
  SL_ASSIGN_OR_RETURN(trace::store::FileState state, trace::store::inspect_file(path));
  if (state == trace::store::FileState::kMissing) return not_found(fmt::format("{}: no such database", path));
  if (state != trace::store::FileState::kStreamlens) {
    return invalid_input(fmt::format("{}: not a streamlens database (empty)", path));
  }
  // As the store does for readers: a read-write connection that refuses
  // writes where the directory allows, so the WAL side files are cleaned up.
  const bool writable = can_write_beside(path);
  SL_ASSIGN_OR_RETURN(Database db, Database::open(path, writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY));
  char* error = nullptr;
  int rc = trace::store::register_events_table(db.handle(), &error);
  if (rc != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    return runtime_error(fmt::format("{}: {}", path, message));
  }
  if (writable) SL_RETURN_IF_ERROR(db.exec("PRAGMA query_only = 1"));
  sqlite3_limit(db.handle(), SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_set_authorizer(db.handle(), authorize, nullptr);
  return db;
}

std::string text_of(sqlite3_stmt* s, int i) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  return std::string(p ? p : "", static_cast<size_t>(sqlite3_column_bytes(s, i)));
}

std::string blob_hex(sqlite3_stmt* s, int i) {
  const auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(s, i));
  std::string out = "x'";
  for (int k = 0; k < sqlite3_column_bytes(s, i); ++k) out += fmt::format("{:02x}", p[k]);
  return out + "'";
}

// A cell as text: NULL is empty (as in the sqlite3 shell), blobs as x'..'.
std::string cell(sqlite3_stmt* s, int i) {
  switch (sqlite3_column_type(s, i)) {
    case SQLITE_NULL: return "";
    case SQLITE_INTEGER: return std::to_string(sqlite3_column_int64(s, i));
    case SQLITE_FLOAT: return fmt::format("{}", sqlite3_column_double(s, i));
    case SQLITE_BLOB: return blob_hex(s, i);
    default: return text_of(s, i);
  }
}

std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char ch : v) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

// Tabs and newlines inside a value would break the columns: escaped.
std::string tsv_field(const std::string& v) {
  std::string out;
  for (char ch : v) {
    if (ch == '\t') out += "\\t";
    else if (ch == '\n') out += "\\n";
    else if (ch == '\\') out += "\\\\";
    else out += ch;
  }
  return out;
}

nlohmann::ordered_json json_cell(sqlite3_stmt* s, int i) {
  switch (sqlite3_column_type(s, i)) {
    case SQLITE_NULL: return nullptr;
    case SQLITE_INTEGER: return sqlite3_column_int64(s, i);
    case SQLITE_FLOAT: return sqlite3_column_double(s, i);
    case SQLITE_BLOB: return blob_hex(s, i);
    default: return text_of(s, i);
  }
}

enum class Format { kText, kCsv, kJson };

void print_header(sqlite3_stmt* s, Format format) {
  if (format == Format::kJson) return;
  std::string line;
  for (int i = 0; i < sqlite3_column_count(s); ++i) {
    const char* name = sqlite3_column_name(s, i);
    if (i) line += format == Format::kCsv ? "," : "\t";
    line += format == Format::kCsv ? csv_field(name) : tsv_field(name);
  }
  std::printf("%s\n", line.c_str());
}

void print_row(sqlite3_stmt* s, Format format, bool first) {
  const int n = sqlite3_column_count(s);
  if (format == Format::kJson) {
    nlohmann::ordered_json row = nlohmann::ordered_json::object();
    for (int i = 0; i < n; ++i) row[sqlite3_column_name(s, i)] = json_cell(s, i);
    std::string text = row.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    std::printf("%s%s", first ? "\n" : ",\n", text.c_str());
    return;
  }
  std::string line;
  for (int i = 0; i < n; ++i) {
    if (i) line += format == Format::kCsv ? "," : "\t";
    line += format == Format::kCsv ? csv_field(cell(s, i)) : tsv_field(cell(s, i));
  }
  std::printf("%s\n", line.c_str());
}

// Only whitespace and semicolons (and comments SQLite skips) may follow the statement.
bool only_blank(const char* tail) {
  for (const char* p = tail; p && *p; ++p) {
    if (*p != ';' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') return false;
  }
  return true;
}

}  // namespace

int cmd_query(const QueryArgs& args) {
  if (args.csv && args.json) return fail(usage_error("query: --csv and --json exclude each other"));
  const Format format = args.json ? Format::kJson : args.csv ? Format::kCsv : Format::kText;
  auto db = open_for_query(args.db);
  if (!db) return fail(db.status());
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db->handle(), args.sql.c_str(), static_cast<int>(args.sql.size()), &stmt, &tail);
  if (rc != SQLITE_OK) {
    const char* hint = (rc & 0xff) == SQLITE_AUTH ? " (query only reads the database)" : "";
    return fail(invalid_input(fmt::format("{}: SQL: {}{}", args.db, sqlite3_errmsg(db->handle()), hint)));
  }
  if (!stmt) return fail(usage_error("query: no SQL statement given"));
  if (!only_blank(tail)) {
    sqlite3_finalize(stmt);
    return fail(usage_error("query: give one SQL statement (text follows the first one)"));
  }
  print_header(stmt, format);
  if (format == Format::kJson) std::printf("[");
  bool first = true;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    print_row(stmt, format, first);
    first = false;
  }
  if (format == Format::kJson) std::printf("%s]\n", first ? "" : "\n");
  int primary = rc & 0xff;
  std::string error = sqlite3_errmsg(db->handle());
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) {
    std::fflush(stdout);
    std::string message = fmt::format("{}: SQL: {}", args.db, error);
    return fail(primary == SQLITE_CORRUPT || primary == SQLITE_AUTH || primary == SQLITE_ERROR
                    ? invalid_input(message)
                    : runtime_error(message));
  }
  return kExitOk;
}

}  // namespace sl::cli
