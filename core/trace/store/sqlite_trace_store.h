#pragma once
// TraceStore on SQLite (docs/store.md), internal to core/trace/store. One
// connection per TraceStore; WAL lets one writer append batches while other
// connections read. The write path is store_write.cc, the read path
// store_read.cc, opening and the schema store_open.cc.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/trace/store/event_chunk.h"
#include "core/trace/store/sqlite_db.h"
#include "core/trace/store/timeline_sort.h"
#include "core/trace/store/trace_store.h"

namespace sl::trace::store {

class StringIdMap;

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
  Result<CompactTrace> load_compact(int64_t run_id) override;
  Result<EventExtras> load_event_extras(int64_t run_id, int32_t device, int32_t stream, int64_t seq) override;
  Result<std::string> program_text(int64_t run_id) override;
  Result<std::vector<sched::StreamAssignmentEntry>> stream_assignment(int64_t run_id) override;
  const std::string& path() const override { return db_.path(); }

 private:
  Status check_writable() const;
  // Runs `body` inside BEGIN IMMEDIATE ... COMMIT, rolling back on error.
  template <typename Body>
  Status write_transaction(Body&& body);
  Result<int64_t> intern_string(const std::string& value);
  Result<int64_t> intern_program(const std::string& name, const std::string& text);
  Result<int64_t> next_seq(int64_t run_id);
  Status insert_chunks(int64_t run_id, int32_t device, int32_t stream, const std::vector<ChunkInput>& track);

  Status read_chunks(int64_t run_id, Trace* trace, std::vector<int64_t>* seqs);
  Status read_legacy_rows(int64_t run_id, std::vector<Event>* events, std::vector<int64_t>* seqs);
  // How many events the run can hold at most, from the data actually stored
  // (never from runs.event_count alone, which a damaged file may inflate).
  Result<size_t> stored_event_bound(int64_t run_id, int64_t claimed);
  // The text of every id `strings` noted, from the strings table, interned
  // into `table` (an id the database lacks becomes "" and counts in `missing`).
  Status look_up_strings(StringIdMap& strings, StringTable& table, int64_t* missing);
  Status resolve_strings(Trace* trace);
  Status read_compact_events(int64_t run_id, CompactTrace* trace);
  Status resolve_compact_strings(CompactTrace* trace);
  Status read_counters(int64_t run_id, std::vector<Counter>* counters);
  Status read_dependencies(int64_t run_id, const std::vector<int64_t>& seqs, Trace* trace);
  Status read_dependencies(int64_t run_id, const SeqIndex& index, std::vector<Dependency>* out, int64_t* dangling);
  Result<RunInfo> read_run(Statement& stmt);

  Database db_;
  bool read_only_;
  // Writer-side caches; cleared when a transaction rolls back.
  std::unordered_map<std::string, int64_t> string_ids_;
  std::unordered_map<int64_t, int64_t> next_seq_;

  Statement insert_chunk_, insert_string_, select_string_, bump_count_, insert_dependency_;
};

// Every connection's page cache (64 MB); load_compact reads through a
// smaller one and restores this.
constexpr const char* kCacheSizePragma = "PRAGMA cache_size = -65536";

// "2026-12-01T07:50:57Z"
std::string now_iso8601();

}  // namespace sl::trace::store
