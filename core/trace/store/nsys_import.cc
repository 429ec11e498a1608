#include "core/trace/store/nsys_import.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/trace/store/sqlite_db.h"

namespace sl::trace {
namespace {

using store::Database;
using store::Statement;

// One CUDA activity record before tracks are assigned.
struct Raw {
  int64_t device_id;
  int64_t stream_id;
  EventKind kind;
  uint32_t name;
  int64_t start, end, bytes, correlation;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

EventKind kernel_kind(const std::string& name) {
  std::string n = lower(name);
  if (n.find("nccl") != std::string::npos) return EventKind::kCollective;
  for (const char* g : {"gemm", "cutlass", "xmma", "cublas", "matmul"}) {
    if (n.find(g) != std::string::npos) return EventKind::kGemm;
  }
  if (n.find("elementwise") != std::string::npos || n.find("vectorized") != std::string::npos) {
    return EventKind::kElementwise;
  }
  return EventKind::kOther;
}

// CUpti_ActivityMemcpyKind names, for tables exported without the enum table.
std::string memcpy_kind_name(int64_t kind) {
  switch (kind) {
    case 1: return "HtoD";
    case 2: return "DtoH";
    case 3: return "HtoA";
    case 4: return "AtoH";
    case 5: return "AtoA";
    case 6: return "AtoD";
    case 7: return "DtoA";
    case 8: return "DtoD";
    case 9: return "HtoH";
    case 10: return "PtoP";
    default: return "unknown";
  }
}

class Importer {
 public:
  explicit Importer(Database& db) : db_(db) {}

  Status read_strings() {
    SL_ASSIGN_OR_RETURN(Statement stmt, db_.prepare("SELECT id, value FROM StringIds"));
    Status status;
    while (stmt.step(&status)) strings_[stmt.column_int(0)] = stmt.column_text(1);
    return status;
  }

  Status read_kernels() {
    const char* table = "CUPTI_ACTIVITY_KIND_KERNEL";
    if (!db_.table_exists(table)) return missing(table);
    // Prefer shortName; fall back to demangledName when shortName is absent.
    bool has_short = has_column(table, "shortName");
    bool has_demangled = has_column(table, "demangledName");
    std::string name_col = has_short ? "shortName" : has_demangled ? "demangledName" : "NULL";
    std::string sql = fmt::format("SELECT start, end, deviceId, streamId, correlationId, {} FROM {}", name_col, table);
    SL_ASSIGN_OR_RETURN(Statement stmt, db_.prepare(sql));
    Status status;
    while (stmt.step(&status)) {
      std::string name;
      if (stmt.column_is_null(5)) {
        trace_.add_counter("nsys_kernel_name_missing", 1, "kernels without a name column value");
        name = "kernel";
      } else {
        auto it = strings_.find(stmt.column_int(5));
        if (it == strings_.end()) {
          trace_.add_counter("nsys_kernel_name_unresolved", 1, "kernel names not found in StringIds");
          name = fmt::format("kernel#{}", stmt.column_int(5));
        } else {
          name = it->second;
        }
      }
      add(stmt.column_int(2), stmt.column_int(3), kernel_kind(name), name, stmt.column_int(0), stmt.column_int(1),
          0, stmt.column_int(4));
    }
    return status;
  }

  Status read_memcpy() {
    const char* table = "CUPTI_ACTIVITY_KIND_MEMCPY";
    if (!db_.table_exists(table)) return missing(table);
    std::map<int64_t, std::string> kinds;
    if (db_.table_exists("ENUM_CUDA_MEMCPY_OPER")) {
      SL_ASSIGN_OR_RETURN(Statement e, db_.prepare("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER"));
      Status status;
      while (e.step(&status)) kinds[e.column_int(0)] = e.column_text(1);
      if (!status.is_ok()) kinds.clear();  // a differently shaped enum table: use CUPTI's names
    }
    std::string sql = fmt::format("SELECT start, end, deviceId, streamId, correlationId, bytes, {} FROM {}",
                                  has_column(table, "copyKind") ? "copyKind" : "0", table);
    SL_ASSIGN_OR_RETURN(Statement stmt, db_.prepare(sql));
    Status status;
    while (stmt.step(&status)) {
      int64_t kind = stmt.column_int(6);
      auto it = kinds.find(kind);
      std::string label = it != kinds.end() && !it->second.empty() ? it->second : memcpy_kind_name(kind);
      add(stmt.column_int(2), stmt.column_int(3), EventKind::kCopy, "memcpy " + label, stmt.column_int(0),
          stmt.column_int(1), stmt.column_int(5), stmt.column_int(4));
    }
    return status;
  }

  Status read_memset() {
    const char* table = "CUPTI_ACTIVITY_KIND_MEMSET";
    if (!db_.table_exists(table)) return missing(table);
    SL_ASSIGN_OR_RETURN(Statement stmt,
                        db_.prepare(fmt::format("SELECT start, end, deviceId, streamId, correlationId, bytes FROM {}",
                                                table)));
    Status status;
    while (stmt.step(&status)) {
      add(stmt.column_int(2), stmt.column_int(3), EventKind::kMemset, "memset", stmt.column_int(0),
          stmt.column_int(1), stmt.column_int(5), stmt.column_int(4));
    }
    return status;
  }

  std::string device_model() {
    if (!db_.table_exists("TARGET_INFO_GPU") || !has_column("TARGET_INFO_GPU", "name")) return "";
    auto stmt = db_.prepare("SELECT DISTINCT name FROM TARGET_INFO_GPU ORDER BY name");
    if (!stmt) return "";
    std::string model;
    Status status;
    while (stmt->step(&status)) model += (model.empty() ? "" : ", ") + stmt->column_text(0);
    return model;
  }

  // Assigns tracks, shifts times to the earliest event and fills the trace.
  Trace finish(int64_t* num_devices) {
    std::sort(raw_.begin(), raw_.end(), [](const Raw& a, const Raw& b) {
      return std::tie(a.start, a.end, a.device_id, a.stream_id) < std::tie(b.start, b.end, b.device_id, b.stream_id);
    });
    std::map<int64_t, int32_t> device_of;
    std::map<std::pair<int64_t, int64_t>, bool> stream_is_comm;  // (deviceId, streamId)
    for (const Raw& r : raw_) {
      device_of.emplace(r.device_id, 0);
      bool& comm = stream_is_comm[{r.device_id, r.stream_id}];
      comm = comm || r.kind == EventKind::kCollective;
    }
    int32_t next_device = 0;
    for (auto& [id, index] : device_of) index = next_device++;
    std::map<std::pair<int64_t, int64_t>, int32_t> stream_of;
    std::map<int64_t, std::pair<int32_t, int32_t>> next_stream;  // deviceId -> (compute, comm)
    for (const auto& [key, comm] : stream_is_comm) {
      auto& [compute_n, comm_n] = next_stream[key.first];
      stream_of[key] = comm ? sched::kCommStreamBase + comm_n++ : compute_n++;
    }
    int64_t origin = raw_.empty() ? 0 : raw_.front().start;
    trace_.events.reserve(raw_.size());
    for (const Raw& r : raw_) {
      Event e;
      e.device = device_of[r.device_id];
      e.stream = stream_of[{r.device_id, r.stream_id}];
      e.stream_kind = sched::stream_kind(e.stream);
      e.kind = r.kind;
      e.name = r.name;
      e.start_ns = r.start - origin;
      e.end_ns = r.end - origin;
      e.bytes = r.bytes;
      e.correlation = r.correlation;
      trace_.events.push_back(e);
    }
    *num_devices = std::max<int64_t>(1, static_cast<int64_t>(device_of.size()));
    return std::move(trace_);
  }

  size_t record_count() const { return raw_.size(); }

 private:
  Status missing(const char* table) {
    trace_.add_counter(fmt::format("nsys_missing_table_{}", table), 1,
                       fmt::format("the export has no {} table (that activity was not traced)", table));
    return ok_status();
  }

  bool has_column(const std::string& table, const char* column) {
    auto stmt = db_.prepare(fmt::format("SELECT 1 FROM pragma_table_info('{}') WHERE name = ?", table));
    if (!stmt) return false;
    stmt->bind(1, std::string_view(column));
    Status status;
    return stmt->step(&status);
  }

  void add(int64_t device_id, int64_t stream_id, EventKind kind, const std::string& name, int64_t start, int64_t end,
           int64_t bytes, int64_t correlation) {
    if (start == 0 && end == 0) {
      trace_.add_counter("nsys_no_timestamp", 1, "records without timestamps (CUPTI could not collect them)");
      return;
    }
    if (end < start) {
      trace_.add_counter("nsys_negative_duration", 1, "records ending before they start (dropped)");
      return;
    }
    // Nsight's timestamps count nanoseconds from the session's start; a
    // negative one is damage, and would overflow the shift to the origin.
    if (start < 0) {
      trace_.add_counter("nsys_negative_timestamp", 1, "records with a negative timestamp (dropped)");
      return;
    }
    raw_.push_back({device_id, stream_id, kind, trace_.strings.intern(name), start, end, bytes, correlation});
  }

  Database& db_;
  std::map<int64_t, std::string> strings_;
  std::vector<Raw> raw_;
  Trace trace_;
};

}  // namespace

Result<ImportedRun> import_nsys_sqlite(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return not_found(fmt::format("{}: no such file", path));
  if (!S_ISREG(st.st_mode)) {
    return invalid_input(fmt::format("{}: not an Nsight Systems SQLite export (not a regular file)", path));
  }
  // Someone else's finished file: read it without creating -wal/-shm files beside it.
  struct stat wal {};
  const bool has_wal = ::stat((path + "-wal").c_str(), &wal) == 0;
  SL_ASSIGN_OR_RETURN(Database db, has_wal ? Database::open(path, SQLITE_OPEN_READONLY) : Database::open_immutable(path));
  auto tables = db.prepare("SELECT count(*) FROM sqlite_master");
  if (!tables) {
    return invalid_input(fmt::format("{}: not an Nsight Systems SQLite export (not a readable SQLite database)", path));
  }
  Status status;
  tables->step(&status);
  if (!status.is_ok()) {
    return invalid_input(fmt::format("{}: not an Nsight Systems SQLite export ({})", path, status.message()));
  }
  bool any_activity = db.table_exists("CUPTI_ACTIVITY_KIND_KERNEL") || db.table_exists("CUPTI_ACTIVITY_KIND_MEMCPY") ||
                      db.table_exists("CUPTI_ACTIVITY_KIND_MEMSET");
  if (!db.table_exists("StringIds")) {
    return invalid_input(fmt::format("{}: not an Nsight Systems SQLite export (no StringIds table)", path));
  }
  if (!any_activity) {
    return invalid_input(fmt::format(
        "{}: the Nsight Systems export holds no CUDA kernel, memcpy or memset activity (trace with --trace=cuda)",
        path));
  }
  Importer importer(db);
  auto wrap = [&](Status s) {
    return s.is_ok() ? s : invalid_input(fmt::format("{}: unexpected Nsight Systems schema: {}", path, s.message()));
  };
  SL_RETURN_IF_ERROR(wrap(importer.read_strings()));
  SL_RETURN_IF_ERROR(wrap(importer.read_kernels()));
  SL_RETURN_IF_ERROR(wrap(importer.read_memcpy()));
  SL_RETURN_IF_ERROR(wrap(importer.read_memset()));

  ImportedRun run;
  run.info.backend = "nsys";
  run.info.device_model = importer.device_model();
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  run.info.name = base;
  run.info.config_json = nlohmann::json{{"imported_from", path}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  run.trace = importer.finish(&run.info.num_devices);
  run.info.makespan_ns = run.trace.makespan_ns();
  run.info.event_count = static_cast<int64_t>(run.trace.events.size());
  run.info.status = RunStatus::kComplete;
  return run;
}

}  // namespace sl::trace
