// TraceStore on SQLite (docs/store.md). One connection per TraceStore;
// WAL lets one writer append batches while other connections read.

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>

#include "core/trace/store/event_chunk.h"
#include "core/trace/store/schema.h"
#include "core/trace/store/sqlite_db.h"
#include "core/trace/store/store_open.h"
#include "core/trace/store/trace_store.h"

namespace sl::trace {
namespace {

using store::Database;
using store::Statement;

constexpr size_t kSaveBatch = 1 << 16;

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// FNV-1a, 64 bit: programs are deduplicated by hash, with a text comparison
// on collision (see intern_program).
std::string text_hash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("fnv1a64:{:016x}:{}", h, text.size());
}

RunStatus parse_status(const std::string& s) {
  if (s == "complete") return RunStatus::kComplete;
  if (s == "failed") return RunStatus::kFailed;
  return RunStatus::kRunning;
}

class SqliteTraceStore final : public TraceStore {
 public:
  SqliteTraceStore(Database db, bool read_only) : db_(std::move(db)), read_only_(read_only) {}

  Status prepare_statements();

  Result<int64_t> begin_run(const RunInfo& info, const std::string& program_text,
                            const std::vector<sched::StreamAssignmentEntry>& streams) override;
  Status append(int64_t run_id, const Trace& batch, size_t first_event, size_t event_count) override;
  Status append_dependencies(int64_t run_id, const std::vector<Dependency>& dependencies) override;
  Status finish_run(int64_t run_id, RunStatus status, int64_t makespan_ns,
                    const std::vector<Counter>& counters) override;
  Result<int64_t> save_run(RunInfo info, const std::string& program_text,
                           const std::vector<sched::StreamAssignmentEntry>& streams, const Trace& trace) override;
  Result<std::vector<RunInfo>> list_runs() override;
  Result<RunInfo> run_info(int64_t run_id) override;
  Result<Trace> load_trace(int64_t run_id) override;
  Result<std::string> program_text(int64_t run_id) override;
  Result<std::vector<sched::StreamAssignmentEntry>> stream_assignment(int64_t run_id) override;
  const std::string& path() const override { return db_.path(); }

 private:
  Status check_writable() const {
    if (read_only_) return usage_error(fmt::format("{}: opened read-only", db_.path()));
    return Status::ok();
  }
  // Runs `body` inside BEGIN IMMEDIATE ... COMMIT, rolling back on error.
  template <typename Body>
  Status write_transaction(Body&& body);
  Result<int64_t> intern_string(const std::string& value);
  Result<int64_t> intern_program(const std::string& name, const std::string& text);
  Result<int64_t> next_seq(int64_t run_id);
  Status read_chunks(int64_t run_id, Trace* trace, std::vector<int64_t>* seqs);
  Status read_legacy_rows(int64_t run_id, std::vector<Event>* events, std::vector<int64_t>* seqs);
  Status insert_chunks(int64_t run_id, int32_t device, int32_t stream, const std::vector<store::ChunkInput>& track);
  Result<RunInfo> read_run(Statement& stmt);

  Database db_;
  bool read_only_;
  // Writer-side caches; cleared when a transaction rolls back.
  std::unordered_map<std::string, int64_t> string_ids_;
  std::unordered_map<int64_t, int64_t> next_seq_;

  Statement insert_chunk_, insert_string_, select_string_, bump_count_, insert_dependency_;
};

template <typename Body>
Status SqliteTraceStore::write_transaction(Body&& body) {
  SL_RETURN_IF_ERROR(check_writable());
  SL_RETURN_IF_ERROR(db_.exec("BEGIN IMMEDIATE"));
  Status status = body();
  if (status.is_ok()) status = db_.exec("COMMIT");
  if (!status.is_ok()) {
    db_.exec("ROLLBACK");
    string_ids_.clear();
    next_seq_.clear();
  }
  return status;
}

Status SqliteTraceStore::prepare_statements() {
  if (read_only_) return Status::ok();
  SL_ASSIGN_OR_RETURN(insert_chunk_, db_.prepare(
      "INSERT INTO event_chunks (run_id, device, stream, start_ns, end_ns, first_seq, last_seq, event_count, data) "
      "VALUES (?,?,?,?,?,?,?,?,?)"));
  SL_ASSIGN_OR_RETURN(insert_string_, db_.prepare("INSERT OR IGNORE INTO strings (value) VALUES (?)"));
  SL_ASSIGN_OR_RETURN(select_string_, db_.prepare("SELECT id FROM strings WHERE value = ?"));
  SL_ASSIGN_OR_RETURN(bump_count_, db_.prepare("UPDATE runs SET event_count = event_count + ? WHERE id = ?"));
  SL_ASSIGN_OR_RETURN(insert_dependency_, db_.prepare(
      "INSERT OR IGNORE INTO dependencies (run_id, from_seq, to_seq) VALUES (?, ?, ?)"));
  return Status::ok();
}

Result<int64_t> SqliteTraceStore::intern_string(const std::string& value) {
  auto it = string_ids_.find(value);
  if (it != string_ids_.end()) return it->second;
  insert_string_.bind(1, value);
  SL_RETURN_IF_ERROR(insert_string_.run());
  int64_t id = 0;
  if (db_.changes() == 1) {
    id = db_.last_insert_rowid();
  } else {
    select_string_.bind(1, value);
    Status status;
    bool found = select_string_.step(&status);
    if (found) id = select_string_.column_int(0);
    select_string_.reset();
    SL_RETURN_IF_ERROR(status);
    if (!found) return runtime_error(fmt::format("{}: string '{}' vanished", db_.path(), value));
  }
  string_ids_.emplace(value, id);
  return id;
}

Result<int64_t> SqliteTraceStore::intern_program(const std::string& name, const std::string& text) {
  std::string hash = text_hash(text);
  SL_ASSIGN_OR_RETURN(Statement find, db_.prepare("SELECT id, text FROM programs WHERE hash = ?"));
  for (int attempt = 0;; ++attempt) {
    std::string key = attempt == 0 ? hash : fmt::format("{}#{}", hash, attempt);
    find.bind(1, key);
    Status status;
    if (find.step(&status)) {
      if (find.column_text(1) == text) return find.column_int(0);
      find.reset();
      continue;  // a hash collision: try the next key
    }
    SL_RETURN_IF_ERROR(status);
    SL_ASSIGN_OR_RETURN(Statement insert, db_.prepare("INSERT INTO programs (name, text, hash) VALUES (?, ?, ?)"));
    insert.bind(1, name);
    insert.bind(2, text);
    insert.bind(3, key);
    SL_RETURN_IF_ERROR(insert.run());
    return db_.last_insert_rowid();
  }
}

Result<int64_t> SqliteTraceStore::begin_run(const RunInfo& info, const std::string& program_text,
                                            const std::vector<sched::StreamAssignmentEntry>& streams) {
  int64_t run_id = 0;
  Status status = write_transaction([&]() -> Status {
    int64_t program_id = 0;
    if (!program_text.empty() || !info.program_name.empty()) {
      SL_ASSIGN_OR_RETURN(program_id, intern_program(info.program_name, program_text));
    }
    SL_ASSIGN_OR_RETURN(Statement insert, db_.prepare(
        "INSERT INTO runs (program_id, name, backend, device_model, num_devices, status, makespan_ns, "
        "config_json, created_at, event_count) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, 0)"));
    if (program_id) insert.bind(1, program_id); else insert.bind_null(1);
    insert.bind(2, info.name);
    insert.bind(3, info.backend);
    insert.bind(4, info.device_model);
    insert.bind(5, info.num_devices);
    insert.bind(6, info.makespan_ns);
    insert.bind(7, info.config_json.empty() ? std::string("{}") : info.config_json);
    insert.bind(8, info.created_at.empty() ? now_iso8601() : info.created_at);
    SL_RETURN_IF_ERROR(insert.run());
    run_id = db_.last_insert_rowid();
    SL_ASSIGN_OR_RETURN(Statement assign, db_.prepare(
        "INSERT INTO stream_assignments (run_id, position, instruction, stream, overridden, async_capable) "
        "VALUES (?, ?, ?, ?, ?, ?)"));
    for (size_t i = 0; i < streams.size(); ++i) {
      assign.bind(1, run_id);
      assign.bind(2, static_cast<int64_t>(i));
      assign.bind(3, streams[i].instruction);
      assign.bind(4, streams[i].stream);
      assign.bind(5, streams[i].overridden ? 1 : 0);
      assign.bind(6, streams[i].async_capable ? 1 : 0);
      SL_RETURN_IF_ERROR(assign.run());
    }
    return Status::ok();
  });
  if (!status.is_ok()) return status;
  next_seq_[run_id] = 0;
  return run_id;
}

Result<int64_t> SqliteTraceStore::next_seq(int64_t run_id) {
  auto it = next_seq_.find(run_id);
  if (it != next_seq_.end()) return it->second;
  // A run begun by another connection (or before a restart): continue after
  // the events already stored.
  SL_ASSIGN_OR_RETURN(Statement stmt, db_.prepare(
      "SELECT status, MAX((SELECT COALESCE(MAX(last_seq) + 1, 0) FROM event_chunks WHERE run_id = ?1), "
      "(SELECT COALESCE(MAX(seq) + 1, 0) FROM events WHERE run_id = ?1)) FROM runs WHERE id = ?1"));
  stmt.bind(1, run_id);
  Status status;
  if (!stmt.step(&status)) {
    SL_RETURN_IF_ERROR(status);
    return not_found(fmt::format("{}: run {} does not exist", db_.path(), run_id));
  }
  if (stmt.column_text(0) != "running") {
    return usage_error(fmt::format("{}: run {} is {}; events can only be added while it runs", db_.path(), run_id,
                                   stmt.column_text(0)));
  }
  int64_t seq = stmt.column_int(1);
  next_seq_[run_id] = seq;
  return seq;
}

Status SqliteTraceStore::insert_chunks(int64_t run_id, int32_t device, int32_t stream,
                                       const std::vector<store::ChunkInput>& track) {
  std::string data;
  for (size_t first = 0; first < track.size(); first += store::kChunkEvents) {
    const size_t count = std::min(store::kChunkEvents, track.size() - first);
    int64_t end_ns = std::numeric_limits<int64_t>::min();
    int64_t first_seq = std::numeric_limits<int64_t>::max(), last_seq = std::numeric_limits<int64_t>::min();
    for (size_t i = first; i < first + count; ++i) {
      end_ns = std::max(end_ns, track[i].event->end_ns);
      first_seq = std::min(first_seq, track[i].seq);
      last_seq = std::max(last_seq, track[i].seq);
    }
    data.clear();
    store::encode_chunk(track.data() + first, count, &data);
    Statement& ins = insert_chunk_;
    ins.bind(1, run_id);
    ins.bind(2, device);
    ins.bind(3, stream);
    ins.bind(4, track[first].event->start_ns);
    ins.bind(5, end_ns);
    ins.bind(6, first_seq);
    ins.bind(7, last_seq);
    ins.bind(8, static_cast<int64_t>(count));
    sqlite3_bind_blob(ins.handle(), 9, data.data(), static_cast<int>(data.size()), SQLITE_STATIC);
    SL_RETURN_IF_ERROR(ins.run());
  }
  return Status::ok();
}

Status SqliteTraceStore::append(int64_t run_id, const Trace& batch, size_t first_event, size_t event_count) {
  if (first_event > batch.events.size() || event_count > batch.events.size() - first_event) {
    return usage_error(fmt::format("append: events [{}, {}) outside a batch of {}", first_event,
                                   first_event + event_count, batch.events.size()));
  }
  if (event_count == 0) return Status::ok();
  return write_transaction([&]() -> Status {
    SL_ASSIGN_OR_RETURN(int64_t seq, next_seq(run_id));
    // Batch string id -> database string id, filled lazily.
    std::vector<int64_t> db_ids(batch.strings.size(), -1);
    auto db_id = [&](uint32_t local) -> Result<int64_t> {
      if (local >= db_ids.size()) return usage_error(fmt::format("append: string id {} out of range", local));
      if (db_ids[local] < 0) {
        SL_ASSIGN_OR_RETURN(db_ids[local], intern_string(batch.strings.get(local)));
      }
      return db_ids[local];
    };
    // Group the batch by track, keeping append order; then each track is
    // sorted by start (seq breaks ties) and packed into chunks.
    std::map<std::pair<int32_t, int32_t>, std::vector<store::ChunkInput>> tracks;
    std::pair<int32_t, int32_t> last_key{};
    std::vector<store::ChunkInput>* last_track = nullptr;
    for (size_t i = first_event; i < first_event + event_count; ++i) {
      const Event& e = batch.events[i];
      store::ChunkInput in;
      in.event = &e;
      in.seq = seq++;
      SL_ASSIGN_OR_RETURN(in.name_id, db_id(e.name));
      SL_ASSIGN_OR_RETURN(in.instruction_id, db_id(e.instruction));
      std::pair<int32_t, int32_t> key{e.device, e.stream};
      if (last_track == nullptr || key != last_key) {
        last_key = key;
        last_track = &tracks[key];
      }
      last_track->push_back(in);
    }
    for (auto& [key, track] : tracks) {
      auto by_start = [](const store::ChunkInput& a, const store::ChunkInput& b) {
        return a.event->start_ns != b.event->start_ns ? a.event->start_ns < b.event->start_ns : a.seq < b.seq;
      };
      if (!std::is_sorted(track.begin(), track.end(), by_start)) std::sort(track.begin(), track.end(), by_start);
      SL_RETURN_IF_ERROR(insert_chunks(run_id, key.first, key.second, track));
    }
    bump_count_.bind(1, static_cast<int64_t>(event_count));
    bump_count_.bind(2, run_id);
    SL_RETURN_IF_ERROR(bump_count_.run());
    next_seq_[run_id] = seq;
    return Status::ok();
  });
}

Status SqliteTraceStore::append_dependencies(int64_t run_id, const std::vector<Dependency>& dependencies) {
  if (dependencies.empty()) return Status::ok();
  return write_transaction([&]() -> Status {
    SL_ASSIGN_OR_RETURN(int64_t seq_end, next_seq(run_id));
    for (const Dependency& d : dependencies) {
      if (d.from >= seq_end || d.to >= seq_end) {
        return usage_error(fmt::format("run {}: dependency {} -> {} refers to an event not appended yet "
                                       "({} so far)", run_id, d.from, d.to, seq_end));
      }
      insert_dependency_.bind(1, run_id);
      insert_dependency_.bind(2, static_cast<int64_t>(d.from));
      insert_dependency_.bind(3, static_cast<int64_t>(d.to));
      SL_RETURN_IF_ERROR(insert_dependency_.run());
    }
    return Status::ok();
  });
}

Status SqliteTraceStore::finish_run(int64_t run_id, RunStatus status, int64_t makespan_ns,
                                    const std::vector<Counter>& counters) {
  Status result = write_transaction([&]() -> Status {
    SL_ASSIGN_OR_RETURN(Statement update, db_.prepare("UPDATE runs SET status = ?, makespan_ns = ? WHERE id = ?"));
    update.bind(1, std::string_view(run_status_name(status)));
    update.bind(2, makespan_ns);
    update.bind(3, run_id);
    SL_RETURN_IF_ERROR(update.run());
    if (db_.changes() != 1) return not_found(fmt::format("{}: run {} does not exist", db_.path(), run_id));
    SL_ASSIGN_OR_RETURN(Statement clear, db_.prepare("DELETE FROM counters WHERE run_id = ?"));
    clear.bind(1, run_id);
    SL_RETURN_IF_ERROR(clear.run());
    SL_ASSIGN_OR_RETURN(Statement insert, db_.prepare(
        "INSERT OR REPLACE INTO counters (run_id, name, value, description) VALUES (?, ?, ?, ?)"));
    for (const Counter& c : counters) {
      insert.bind(1, run_id);
      insert.bind(2, c.name);
      insert.bind(3, c.value);
      insert.bind(4, c.description);
      SL_RETURN_IF_ERROR(insert.run());
    }
    return Status::ok();
  });
  if (result.is_ok()) next_seq_.erase(run_id);
  return result;
}

Result<int64_t> SqliteTraceStore::save_run(RunInfo info, const std::string& program_text,
                                           const std::vector<sched::StreamAssignmentEntry>& streams,
                                           const Trace& trace) {
  SL_ASSIGN_OR_RETURN(int64_t run_id, begin_run(info, program_text, streams));
  Status status;
  for (size_t first = 0; first < trace.events.size() && status.is_ok(); first += kSaveBatch) {
    status = append(run_id, trace, first, std::min(kSaveBatch, trace.events.size() - first));
  }
  if (status.is_ok()) status = append_dependencies(run_id, trace.dependencies);
  if (!status.is_ok()) {
    finish_run(run_id, RunStatus::kFailed, 0, trace.counters);  // best effort; the first error is reported
    return status;
  }
  int64_t makespan = info.makespan_ns != 0 ? info.makespan_ns : trace.makespan_ns();
  SL_RETURN_IF_ERROR(finish_run(run_id, RunStatus::kComplete, makespan, trace.counters));
  return run_id;
}

constexpr const char* kRunColumns =
    "SELECT r.id, r.name, COALESCE(p.name, ''), COALESCE(r.program_id, 0), r.backend, r.device_model, "
    "r.num_devices, r.status, r.makespan_ns, r.config_json, r.created_at, r.event_count "
    "FROM runs r LEFT JOIN programs p ON p.id = r.program_id";

Result<RunInfo> SqliteTraceStore::read_run(Statement& stmt) {
  RunInfo info;
  info.id = stmt.column_int(0);
  info.name = stmt.column_text(1);
  info.program_name = stmt.column_text(2);
  info.program_id = stmt.column_int(3);
  info.backend = stmt.column_text(4);
  info.device_model = stmt.column_text(5);
  info.num_devices = stmt.column_int(6);
  info.status = parse_status(stmt.column_text(7));
  info.makespan_ns = stmt.column_int(8);
  info.config_json = stmt.column_text(9);
  info.created_at = stmt.column_text(10);
  info.event_count = stmt.column_int(11);
  return info;
}

Result<std::vector<RunInfo>> SqliteTraceStore::list_runs() {
  SL_ASSIGN_OR_RETURN(Statement stmt, db_.prepare(std::string(kRunColumns) + " ORDER BY r.id"));
  std::vector<RunInfo> runs;
  Status status;
  while (stmt.step(&status)) {
    SL_ASSIGN_OR_RETURN(RunInfo info, read_run(stmt));
    runs.push_back(std::move(info));
  }
  SL_RETURN_IF_ERROR(status);
  return runs;
}

Result<RunInfo> SqliteTraceStore::run_info(int64_t run_id) {
  SL_ASSIGN_OR_RETURN(Statement stmt, db_.prepare(std::string(kRunColumns) + " WHERE r.id = ?"));
  stmt.bind(1, run_id);
  Status status;
  if (!stmt.step(&status)) {
    SL_RETURN_IF_ERROR(status);
    return not_found(fmt::format("{}: no run {}", db_.path(), run_id));
  }
  return read_run(stmt);
}

// Page faults dominate filling a fresh 70 MB vector on some virtual machines;
// transparent huge pages (where the kernel offers them on request) cut them
// 512-fold. Advice only: failure changes nothing.
void advise_huge_pages(void* data, size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  auto begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  auto end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

// A database string id as held in Event::name until remapped; ids beyond
// 32 bits (never written by us) become one that no string has.
uint32_t string_id(int64_t id) {
  return id >= 0 && id < static_cast<int64_t>(UINT32_MAX) ? static_cast<uint32_t>(id) : UINT32_MAX;
}

// Puts events in timeline order, (device, stream, start, seq), moving `seqs`
// along. Chunks come back in that order unless a track's appends overlap in
// time (or version 1 rows follow chunks); only then is anything sorted.
void sort_timeline(std::vector<Event>* events, std::vector<int64_t>* seqs) {
  const size_t n = events->size();
  auto before = [&](size_t a, size_t b) {
    const Event& x = (*events)[a];
    const Event& y = (*events)[b];
    if (x.device != y.device) return x.device < y.device;
    if (x.stream != y.stream) return x.stream < y.stream;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    return (*seqs)[a] < (*seqs)[b];
  };
  size_t i = 1;
  while (i < n && !before(i, i - 1)) ++i;
  if (i >= n) return;
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), before);
  // Apply the permutation in place, cycle by cycle (no second copy of the events).
  for (size_t start = 0; start < n; ++start) {
    if (order[start] == start) continue;
    Event e = (*events)[start];
    int64_t seq = (*seqs)[start];
    size_t at = start;
    while (order[at] != start) {
      size_t from = order[at];
      (*events)[at] = (*events)[from];
      (*seqs)[at] = (*seqs)[from];
      order[at] = static_cast<uint32_t>(at);
      at = from;
    }
    (*events)[at] = e;
    (*seqs)[at] = seq;
    order[at] = static_cast<uint32_t>(at);
  }
}

// Maps database string ids to the loaded trace's ids. Dense ids (the normal
// case) use a vector; absurdly large ones fall back to a hash map.
class StringIdMap {
 public:
  void note(int64_t db_id) {
    if (db_id >= 0 && db_id < kDenseLimit) {
      if (static_cast<size_t>(db_id) >= dense_.size()) dense_.resize(static_cast<size_t>(db_id) + 1, kUnset);
      if (dense_[static_cast<size_t>(db_id)] == kUnset) {
        dense_[static_cast<size_t>(db_id)] = 0;
        order_.push_back(db_id);
      }
    } else if (sparse_.emplace(db_id, 0).second) {
      order_.push_back(db_id);
    }
  }
  void set(int64_t db_id, uint32_t local) {
    if (db_id >= 0 && db_id < kDenseLimit) dense_[static_cast<size_t>(db_id)] = local;
    else sparse_[db_id] = local;
  }
  uint32_t get(int64_t db_id) const {
    if (db_id >= 0 && db_id < kDenseLimit) return dense_[static_cast<size_t>(db_id)];
    return sparse_.at(db_id);
  }
  const std::vector<int64_t>& order() const { return order_; }

 private:
  static constexpr int64_t kDenseLimit = 1 << 24;
  static constexpr uint32_t kUnset = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> dense_;
  std::unordered_map<int64_t, uint32_t> sparse_;
  std::vector<int64_t> order_;
};

Status SqliteTraceStore::read_chunks(int64_t run_id, Trace* trace, std::vector<int64_t>* seqs) {
  // Version 1 files opened read-only have no chunks table.
  if (!db_.table_exists("event_chunks")) return Status::ok();
  SL_ASSIGN_OR_RETURN(Statement stmt, db_.prepare(
      "SELECT device, stream, event_count, data FROM event_chunks WHERE run_id = ? "
      "ORDER BY device, stream, start_ns, first_seq"));
  stmt.bind(1, run_id);
  sqlite3_stmt* s = stmt.handle();
  Status status;
  while (stmt.step(&status)) {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(s, 3));
    std::string_view blob(data != nullptr ? data : "", static_cast<size_t>(sqlite3_column_bytes(s, 3)));
    if (!store::decode_chunk(blob, sqlite3_column_int(s, 0), sqlite3_column_int(s, 1), sqlite3_column_int64(s, 2),
                             &trace->events, seqs)) {
      trace->add_counter("store_corrupt_chunk", 1, "stored event chunks that could not be decoded (events lost)");
    }
  }
  return status;
}

// Runs recorded by schema version 1: one row per event.
Status SqliteTraceStore::read_legacy_rows(int64_t run_id, std::vector<Event>* events, std::vector<int64_t>* seqs) {
  SL_ASSIGN_OR_RETURN(Statement stmt, db_.prepare(
      "SELECT seq, device, stream, stream_kind, kind, name_id, instruction_id, start_ns, end_ns, bytes, flops, "
      "correlation, iteration FROM events WHERE run_id = ? ORDER BY device, stream, start_ns, seq"));
  stmt.bind(1, run_id);
  sqlite3_stmt* s = stmt.handle();
  Status status;
  while (stmt.step(&status)) {
    Event e;
    e.device = sqlite3_column_int(s, 1);
    e.stream = sqlite3_column_int(s, 2);
    e.stream_kind = sqlite3_column_int(s, 3) == 0 ? StreamKind::kCompute : StreamKind::kCommunication;
    int kind = sqlite3_column_int(s, 4);
    e.kind = kind >= 0 && kind <= static_cast<int>(EventKind::kOther) ? static_cast<EventKind>(kind)
                                                                      : EventKind::kOther;
    e.start_ns = sqlite3_column_int64(s, 7);
    e.end_ns = sqlite3_column_int64(s, 8);
    e.bytes = sqlite3_column_int64(s, 9);
    e.flops = sqlite3_column_int64(s, 10);
    e.correlation = sqlite3_column_int64(s, 11);
    e.iteration = sqlite3_column_int(s, 12);
    e.name = string_id(sqlite3_column_int64(s, 5));
    e.instruction = string_id(sqlite3_column_int64(s, 6));
    events->push_back(e);
    seqs->push_back(sqlite3_column_int64(s, 0));
  }
  return status;
}

Result<Trace> SqliteTraceStore::load_trace(int64_t run_id) {
  // One read transaction: events, edges and counters from the same snapshot
  // while a writer keeps appending.
  SL_RETURN_IF_ERROR(db_.exec("BEGIN"));
  struct Rollback {
    Database* db;
    ~Rollback() { db->exec("COMMIT"); }
  } end_read{&db_};

  SL_ASSIGN_OR_RETURN(RunInfo info, run_info(run_id));
  // Events arrive with database string ids in name/instruction, remapped below.
  Trace trace;
  std::vector<int64_t> seqs;
  const auto expected = static_cast<size_t>(std::max<int64_t>(info.event_count, 0));
  trace.events.reserve(expected);
  seqs.reserve(expected);
  advise_huge_pages(trace.events.data(), trace.events.capacity() * sizeof(Event));
  SL_RETURN_IF_ERROR(read_chunks(run_id, &trace, &seqs));
  SL_RETURN_IF_ERROR(read_legacy_rows(run_id, &trace.events, &seqs));
  sort_timeline(&trace.events, &seqs);
  const size_t n = trace.events.size();

  StringIdMap strings;
  for (const Event& e : trace.events) {
    strings.note(e.name);
    strings.note(e.instruction);
  }
  Status status;
  SL_ASSIGN_OR_RETURN(Statement value, db_.prepare("SELECT value FROM strings WHERE id = ?"));
  for (int64_t id : strings.order()) {
    value.bind(1, id);
    bool found = value.step(&status);
    std::string text = found ? value.column_text(0) : std::string();
    value.reset();
    SL_RETURN_IF_ERROR(status);
    if (!found) trace.add_counter("store_missing_string", 1, "events naming a string id the database lacks");
    strings.set(id, trace.strings.intern(text));
  }

  std::vector<uint32_t> index_of_seq(n, std::numeric_limits<uint32_t>::max());
  for (size_t i = 0; i < n; ++i) {
    Event& e = trace.events[i];
    e.name = strings.get(e.name);
    e.instruction = strings.get(e.instruction);
    const int64_t seq = seqs[i];
    if (seq >= 0 && seq < (1ll << 32)) {
      if (static_cast<size_t>(seq) >= index_of_seq.size()) {
        index_of_seq.resize(static_cast<size_t>(seq) + 1, std::numeric_limits<uint32_t>::max());
      }
      index_of_seq[static_cast<size_t>(seq)] = static_cast<uint32_t>(i);
    }
  }

  SL_ASSIGN_OR_RETURN(Statement deps, db_.prepare(
      "SELECT from_seq, to_seq FROM dependencies WHERE run_id = ? ORDER BY from_seq, to_seq"));
  deps.bind(1, run_id);
  auto index = [&](int64_t seq) {
    return seq >= 0 && static_cast<uint64_t>(seq) < index_of_seq.size() ? index_of_seq[static_cast<size_t>(seq)]
                                                                         : std::numeric_limits<uint32_t>::max();
  };
  while (deps.step(&status)) {
    uint32_t from = index(deps.column_int(0));
    uint32_t to = index(deps.column_int(1));
    if (from == std::numeric_limits<uint32_t>::max() || to == std::numeric_limits<uint32_t>::max()) {
      trace.add_counter("store_dangling_dependency", 1, "dependency edges naming an event that is not stored");
      continue;
    }
    trace.dependencies.push_back({from, to});
  }
  SL_RETURN_IF_ERROR(status);

  SL_ASSIGN_OR_RETURN(Statement counters, db_.prepare(
      "SELECT name, value, description FROM counters WHERE run_id = ? ORDER BY name"));
  counters.bind(1, run_id);
  while (counters.step(&status)) {
    trace.counters.push_back({counters.column_text(0), counters.column_int(1), counters.column_text(2)});
  }
  SL_RETURN_IF_ERROR(status);
  return trace;
}

Result<std::string> SqliteTraceStore::program_text(int64_t run_id) {
  SL_ASSIGN_OR_RETURN(Statement stmt, db_.prepare(
      "SELECT COALESCE(p.text, '') FROM runs r LEFT JOIN programs p ON p.id = r.program_id WHERE r.id = ?"));
  stmt.bind(1, run_id);
  Status status;
  if (!stmt.step(&status)) {
    SL_RETURN_IF_ERROR(status);
    return not_found(fmt::format("{}: no run {}", db_.path(), run_id));
  }
  return stmt.column_text(0);
}

Result<std::vector<sched::StreamAssignmentEntry>> SqliteTraceStore::stream_assignment(int64_t run_id) {
  SL_ASSIGN_OR_RETURN(RunInfo info, run_info(run_id));  // not_found for an unknown run
  (void)info;
  SL_ASSIGN_OR_RETURN(Statement stmt, db_.prepare(
      "SELECT instruction, stream, overridden, async_capable FROM stream_assignments WHERE run_id = ? "
      "ORDER BY position"));
  stmt.bind(1, run_id);
  std::vector<sched::StreamAssignmentEntry> entries;
  Status status;
  while (stmt.step(&status)) {
    sched::StreamAssignmentEntry e;
    e.instruction = stmt.column_text(0);
    e.stream = static_cast<int>(stmt.column_int(1));
    e.overridden = stmt.column_int(2) != 0;
    e.async_capable = stmt.column_int(3) != 0;
    entries.push_back(std::move(e));
  }
  SL_RETURN_IF_ERROR(status);
  return entries;
}

// Creates the schema in a new file, or brings an older streamlens file up to
// this version (every statement of schema.sql is IF NOT EXISTS; version 1
// lacks only event_chunks).
Status initialize_schema(Database& db, bool fresh) {
  SL_RETURN_IF_ERROR(db.exec("BEGIN IMMEDIATE"));
  Status status = db.exec(store::kSchemaSql);
  if (status.is_ok()) {
    std::string meta = fresh ? fmt::format(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('application', '{}'), ('schema_version', '{}'), "
        "('created_at', '{}')",
        store::kApplicationId, store::kSchemaVersion, now_iso8601())
                             : fmt::format("UPDATE meta SET value = '{}' WHERE key = 'schema_version'",
                                           store::kSchemaVersion);
    status = db.exec(meta.c_str());
  }
  if (status.is_ok()) return db.exec("COMMIT");
  db.exec("ROLLBACK");
  return status;
}

// Whether this process may write `path` and create files beside it.
bool can_write_beside(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return ::access(path.c_str(), W_OK) == 0 && ::access(dir.empty() ? "." : dir.c_str(), W_OK) == 0;
}

}  // namespace

Result<std::unique_ptr<TraceStore>> TraceStore::open(const std::string& path, Mode mode) {
  int64_t version = 0;
  SL_ASSIGN_OR_RETURN(store::FileState state, store::inspect_file(path, &version));
  if (state == store::FileState::kMissing && mode != Mode::kCreateIfMissing) {
    return not_found(fmt::format("{}: no such database", path));
  }
  if (state != store::FileState::kStreamlens && mode == Mode::kReadOnly) {
    return invalid_input(fmt::format("{}: not a streamlens database (empty)", path));
  }
  bool read_only = mode == Mode::kReadOnly;
  // Reading our own file where it may be written: a read-write connection
  // that refuses writes (query_only). A read-only one cannot remove the
  // -wal and -shm files SQLite makes beside a WAL database, so every `runs`
  // or `show` left them behind; the last read-write one to close does.
  const bool writable = read_only && can_write_beside(path);
  int flags = !read_only ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
              : writable ? SQLITE_OPEN_READWRITE
                         : SQLITE_OPEN_READONLY;
  SL_ASSIGN_OR_RETURN(Database db, Database::open(path, flags));
  if (writable) SL_RETURN_IF_ERROR(db.exec("PRAGMA query_only = 1"));
  if (!read_only) {
    // Only our own (or new, empty) files reach this point: writing is safe.
    SL_RETURN_IF_ERROR(db.exec("PRAGMA journal_mode = WAL"));
    SL_RETURN_IF_ERROR(db.exec("PRAGMA synchronous = NORMAL"));
    if (state != store::FileState::kStreamlens) {
      SL_RETURN_IF_ERROR(initialize_schema(db, true));
    } else if (version < store::kSchemaVersion) {
      SL_RETURN_IF_ERROR(initialize_schema(db, false));
    }
  }
  SL_RETURN_IF_ERROR(db.exec("PRAGMA cache_size = -65536"));
  auto store = std::make_unique<SqliteTraceStore>(std::move(db), read_only);
  SL_RETURN_IF_ERROR(store->prepare_statements());
  return std::unique_ptr<TraceStore>(std::move(store));
}

}  // namespace sl::trace
