// The store's write path: runs begin, grow batch by batch (each batch one
// transaction, events packed into chunks) and finish.

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <limits>
#include <map>

#include "core/trace/store/sqlite_trace_store.h"

namespace sl::trace::store {
namespace {

constexpr size_t kSaveBatch = 1 << 16;

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

}  // namespace

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Status SqliteTraceStore::check_writable() const {
  if (read_only_) return usage_error(fmt::format("{}: opened read-only", db_.path()));
  return ok_status();
}

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
  if (read_only_) return ok_status();
  SL_ASSIGN_OR_RETURN(insert_chunk_, db_.prepare(
      "INSERT INTO event_chunks (run_id, device, stream, start_ns, end_ns, first_seq, last_seq, event_count, data) "
      "VALUES (?,?,?,?,?,?,?,?,?)"));
  SL_ASSIGN_OR_RETURN(insert_string_, db_.prepare("INSERT OR IGNORE INTO strings (value) VALUES (?)"));
  SL_ASSIGN_OR_RETURN(select_string_, db_.prepare("SELECT id FROM strings WHERE value = ?"));
  SL_ASSIGN_OR_RETURN(bump_count_, db_.prepare("UPDATE runs SET event_count = event_count + ? WHERE id = ?"));
  SL_ASSIGN_OR_RETURN(insert_dependency_, db_.prepare(
      "INSERT OR IGNORE INTO dependencies (run_id, from_seq, to_seq) VALUES (?, ?, ?)"));
  return ok_status();
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
  SL_ASSIGN_OR_RETURN(Statement find, db_.prepare("SELECT id, text, name FROM programs WHERE hash = ?"));
  for (int attempt = 0;; ++attempt) {
    std::string key = attempt == 0 ? hash : fmt::format("{}#{}", hash, attempt);
    find.bind(1, key);
    Status status;
    if (find.step(&status)) {
      // One program is one name and one text: captures imported without a
      // module all have an empty text, and each keeps its own name.
      if (find.column_text(1) == text && find.column_text(2) == name) return find.column_int(0);
      find.reset();
      continue;  // a hash collision, or the same text under another name: try the next key
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
    return ok_status();
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
                                       const std::vector<ChunkInput>& track) {
  std::string data;
  for (size_t first = 0; first < track.size(); first += kChunkEvents) {
    const size_t count = std::min(kChunkEvents, track.size() - first);
    int64_t end_ns = std::numeric_limits<int64_t>::min();
    int64_t first_seq = std::numeric_limits<int64_t>::max(), last_seq = std::numeric_limits<int64_t>::min();
    for (size_t i = first; i < first + count; ++i) {
      end_ns = std::max(end_ns, track[i].event->end_ns);
      first_seq = std::min(first_seq, track[i].seq);
      last_seq = std::max(last_seq, track[i].seq);
    }
    data.clear();
    encode_chunk(track.data() + first, count, &data);
    Statement& ins = insert_chunk_;
    ins.bind(1, run_id);
    ins.bind(2, device);
    ins.bind(3, stream);
    ins.bind(4, track[first].event->start_ns);
    ins.bind(5, end_ns);
    ins.bind(6, first_seq);
    ins.bind(7, last_seq);
    ins.bind(8, static_cast<int64_t>(count));
    ins.bind_blob(9, data);
    SL_RETURN_IF_ERROR(ins.run());
  }
  return ok_status();
}

Status SqliteTraceStore::append(int64_t run_id, const Trace& batch, size_t first_event, size_t event_count) {
  if (first_event > batch.events.size() || event_count > batch.events.size() - first_event) {
    return usage_error(fmt::format("append: events [{}, {}) outside a batch of {}", first_event,
                                   first_event + event_count, batch.events.size()));
  }
  if (event_count == 0) return ok_status();
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
    std::map<std::pair<int32_t, int32_t>, std::vector<ChunkInput>> tracks;
    std::pair<int32_t, int32_t> last_key{};
    std::vector<ChunkInput>* last_track = nullptr;
    for (size_t i = first_event; i < first_event + event_count; ++i) {
      const Event& e = batch.events[i];
      ChunkInput in;
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
      auto by_start = [](const ChunkInput& a, const ChunkInput& b) {
        return a.event->start_ns != b.event->start_ns ? a.event->start_ns < b.event->start_ns : a.seq < b.seq;
      };
      if (!std::is_sorted(track.begin(), track.end(), by_start)) std::sort(track.begin(), track.end(), by_start);
      SL_RETURN_IF_ERROR(insert_chunks(run_id, key.first, key.second, track));
    }
    bump_count_.bind(1, static_cast<int64_t>(event_count));
    bump_count_.bind(2, run_id);
    SL_RETURN_IF_ERROR(bump_count_.run());
    next_seq_[run_id] = seq;
    return ok_status();
  });
}

Status SqliteTraceStore::append_dependencies(int64_t run_id, const std::vector<Dependency>& dependencies) {
  if (dependencies.empty()) return ok_status();
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
    return ok_status();
  });
}

Status SqliteTraceStore::finish_run(int64_t run_id, RunStatus status, int64_t makespan_ns,
                                    const std::vector<Counter>& counters) {
  Status result = write_transaction([&]() -> Status {
    // `interrupted` is stored as `failed` plus a mark in the config (the
    // schema's CHECK predates it); read_run turns it back.
    SL_ASSIGN_OR_RETURN(Statement update, db_.prepare(
        "UPDATE runs SET status = ?1, makespan_ns = ?2, config_json = CASE WHEN ?4 AND json_valid(config_json) "
        "THEN json_set(config_json, '$.interrupted', json('true')) ELSE config_json END WHERE id = ?3"));
    const bool interrupted = status == RunStatus::kInterrupted;
    update.bind(1, std::string_view(run_status_name(interrupted ? RunStatus::kFailed : status)));
    update.bind(4, int64_t{interrupted ? 1 : 0});
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
    return ok_status();
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
    (void)finish_run(run_id, RunStatus::kFailed, 0, trace.counters);  // best effort; the first error is reported
    return status;
  }
  int64_t makespan = info.makespan_ns != 0 ? info.makespan_ns : trace.makespan_ns();
  SL_RETURN_IF_ERROR(finish_run(run_id, RunStatus::kComplete, makespan, trace.counters));
  return run_id;
}

}  // namespace sl::trace::store
