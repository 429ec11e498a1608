// The store's read path: runs and their events, edges and counters. Every
// count or id read from the file is checked before it sizes anything.

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "core/trace/store/read_support.h"
#include "core/trace/store/sqlite_trace_store.h"
#include "core/trace/store/timeline_sort.h"

namespace sl::trace::store {
namespace {

RunStatus parse_status(const std::string& s) {
  if (s == "complete") return RunStatus::kComplete;
  if (s == "failed") return RunStatus::kFailed;
  return RunStatus::kRunning;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

// A `running` run recorded by a process of this host that no longer exists
// (killed with SIGKILL, or the machine lost power) is interrupted; a finished
// run marked by the signal handler is too. Runs of other hosts stay as stored.
RunStatus effective_status(RunStatus stored, const std::string& config_json) {
  if (stored == RunStatus::kComplete) return stored;
  nlohmann::json config = nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) return stored;
  if (stored == RunStatus::kFailed) {
    auto it = config.find("interrupted");
    return it != config.end() && it->is_boolean() && it->get<bool>() ? RunStatus::kInterrupted : stored;
  }
  auto pid = config.find("pid");
  auto host = config.find("host");
  if (pid == config.end() || host == config.end() || !pid->is_number_integer() || !host->is_string()) return stored;
  const int64_t p = pid->get<int64_t>();
  if (p <= 0 || p > std::numeric_limits<pid_t>::max() || host->get<std::string>() != host_name()) return stored;
  if (::kill(static_cast<pid_t>(p), 0) != 0 && errno == ESRCH) return RunStatus::kInterrupted;
  return stored;
}

constexpr const char* kRunColumns =
    "SELECT r.id, r.name, COALESCE(p.name, ''), COALESCE(r.program_id, 0), r.backend, r.device_model, "
    "r.num_devices, r.status, r.makespan_ns, r.config_json, r.created_at, r.event_count "
    "FROM runs r LEFT JOIN programs p ON p.id = r.program_id";

}  // namespace

Result<RunInfo> SqliteTraceStore::read_run(Statement& stmt) {
  RunInfo info;
  info.id = stmt.column_int(0);
  info.name = stmt.column_text(1);
  info.program_name = stmt.column_text(2);
  info.program_id = stmt.column_int(3);
  info.backend = stmt.column_text(4);
  info.device_model = stmt.column_text(5);
  info.num_devices = stmt.column_int(6);
  info.makespan_ns = stmt.column_int(8);
  info.config_json = stmt.column_text(9);
  info.status = effective_status(parse_status(stmt.column_text(7)), info.config_json);
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

Status SqliteTraceStore::read_chunks(int64_t run_id, Trace* trace, std::vector<int64_t>* seqs) {
  // Version 1 files opened read-only have no chunks table.
  if (!db_.table_exists("event_chunks")) return ok_status();
  SL_ASSIGN_OR_RETURN(Statement stmt, db_.prepare(
      "SELECT device, stream, event_count, data FROM event_chunks WHERE run_id = ? "
      "ORDER BY device, stream, start_ns, first_seq"));
  stmt.bind(1, run_id);
  Status status;
  while (stmt.step(&status)) {
    if (!decode_chunk(stmt.column_blob(3), stmt.column_int32(0), stmt.column_int32(1), stmt.column_int(2),
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
  Status status;
  while (stmt.step(&status)) {
    Event e;
    e.device = stmt.column_int32(1);
    e.stream = stmt.column_int32(2);
    e.stream_kind = stmt.column_int32(3) == 0 ? StreamKind::kCompute : StreamKind::kCommunication;
    int kind = stmt.column_int32(4);
    e.kind = kind >= 0 && kind <= static_cast<int>(EventKind::kOther) ? static_cast<EventKind>(kind)
                                                                      : EventKind::kOther;
    e.start_ns = stmt.column_int(7);
    e.end_ns = stmt.column_int(8);
    e.bytes = stmt.column_int(9);
    e.flops = stmt.column_int(10);
    e.correlation = stmt.column_int(11);
    e.iteration = stmt.column_int32(12);
    e.name = string_id(stmt.column_int(5));
    e.instruction = string_id(stmt.column_int(6));
    events->push_back(e);
    seqs->push_back(stmt.column_int(0));
  }
  return status;
}

Result<size_t> SqliteTraceStore::stored_event_bound(int64_t run_id, int64_t claimed) {
  // decode_chunk needs at least 10 bytes an event; version 1 rows count themselves.
  int64_t bound = 0;
  if (db_.table_exists("event_chunks")) {
    SL_ASSIGN_OR_RETURN(Statement bytes, db_.prepare(
        "SELECT COALESCE(SUM(length(data)), 0) FROM event_chunks WHERE run_id = ?"));
    bytes.bind(1, run_id);
    Status status;
    if (bytes.step(&status)) bound = bytes.column_int(0) / 10;
    SL_RETURN_IF_ERROR(status);
  }
  SL_ASSIGN_OR_RETURN(Statement rows, db_.prepare("SELECT COUNT(*) FROM events WHERE run_id = ?"));
  rows.bind(1, run_id);
  Status status;
  if (rows.step(&status)) bound += rows.column_int(0);
  SL_RETURN_IF_ERROR(status);
  return static_cast<size_t>(std::clamp<int64_t>(claimed, 0, std::max<int64_t>(bound, 0)));
}

Status SqliteTraceStore::look_up_strings(StringIdMap& strings, StringTable& table, int64_t* missing) {
  Status status;
  SL_ASSIGN_OR_RETURN(Statement value, db_.prepare("SELECT value FROM strings WHERE id = ?"));
  for (int64_t id : strings.order()) {
    value.bind(1, id);
    bool found = value.step(&status);
    std::string text = found ? value.column_text(0) : std::string();
    value.reset();
    SL_RETURN_IF_ERROR(status);
    *missing += !found;
    strings.set(id, table.intern(text));
  }
  return ok_status();
}

Status SqliteTraceStore::resolve_strings(Trace* trace) {
  StringIdMap strings;
  for (const Event& e : trace->events) {
    strings.note(e.name);
    strings.note(e.instruction);
  }
  int64_t missing = 0;
  SL_RETURN_IF_ERROR(look_up_strings(strings, trace->strings, &missing));
  if (missing > 0) trace->add_counter("store_missing_string", missing, "events naming a string id the database lacks");
  for (Event& e : trace->events) {
    e.name = strings.get(e.name);
    e.instruction = strings.get(e.instruction);
  }
  return ok_status();
}

Status SqliteTraceStore::read_dependencies(int64_t run_id, const SeqIndex& index, std::vector<Dependency>* out,
                                           int64_t* dangling) {
  SL_ASSIGN_OR_RETURN(Statement deps, db_.prepare(
      "SELECT from_seq, to_seq FROM dependencies WHERE run_id = ? ORDER BY from_seq, to_seq"));
  deps.bind(1, run_id);
  Status status;
  while (deps.step(&status)) {
    uint32_t from = index.find(deps.column_int(0));
    uint32_t to = index.find(deps.column_int(1));
    if (from == SeqIndex::kNone || to == SeqIndex::kNone) {
      ++*dangling;
      continue;
    }
    out->push_back({from, to});
  }
  return status;
}

Status SqliteTraceStore::read_dependencies(int64_t run_id, const std::vector<int64_t>& seqs, Trace* trace) {
  int64_t dangling = 0;
  Status status = read_dependencies(run_id, SeqIndex(seqs), &trace->dependencies, &dangling);
  if (dangling > 0) {
    trace->add_counter("store_dangling_dependency", dangling, "dependency edges naming an event that is not stored");
  }
  return status;
}

Status SqliteTraceStore::read_counters(int64_t run_id, std::vector<Counter>* out) {
  SL_ASSIGN_OR_RETURN(Statement counters, db_.prepare(
      "SELECT name, value, description FROM counters WHERE run_id = ? ORDER BY name"));
  counters.bind(1, run_id);
  Status status;
  while (counters.step(&status)) {
    out->push_back({counters.column_text(0), counters.column_int(1), counters.column_text(2)});
  }
  return status;
}

Result<Trace> SqliteTraceStore::load_trace(int64_t run_id) {
  ReadTransaction snapshot(db_);
  SL_RETURN_IF_ERROR(snapshot.begin());

  SL_ASSIGN_OR_RETURN(RunInfo info, run_info(run_id));
  // Events arrive with database string ids in name/instruction, remapped below.
  Trace trace;
  std::vector<int64_t> seqs;
  SL_ASSIGN_OR_RETURN(const size_t expected, stored_event_bound(run_id, info.event_count));
  trace.events.reserve(expected);
  seqs.reserve(expected);
  advise_huge_pages(trace.events.data(), trace.events.capacity() * sizeof(Event));
  SL_RETURN_IF_ERROR(read_chunks(run_id, &trace, &seqs));
  SL_RETURN_IF_ERROR(read_legacy_rows(run_id, &trace.events, &seqs));
  if (trace.events.size() >= SeqIndex::kNone) {
    return invalid_input(fmt::format("{}: run {} holds more than 2^32 events", db_.path(), run_id));
  }
  sort_timeline(&trace.events, &seqs);
  SL_RETURN_IF_ERROR(resolve_strings(&trace));
  SL_RETURN_IF_ERROR(read_dependencies(run_id, seqs, &trace));
  SL_RETURN_IF_ERROR(read_counters(run_id, &trace.counters));
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

}  // namespace sl::trace::store
