// The store's read path into a CompactTrace (compact_trace.h): the same
// events, order, edges and counters as load_trace, decoded straight into
// columns, and the fields it leaves out read for one event on demand.

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "core/trace/store/chunk_decoder.h"
#include "core/trace/store/read_support.h"  // StringIdMap
#include "core/trace/store/sqlite_trace_store.h"
#include "core/trace/store/timeline_sort.h"

namespace sl::trace::store {
namespace {

// Timeline order (device, stream, start, seq), as sort_timeline; sorts only
// when a track's appends overlap in time or version 1 rows follow chunks.
// Seqs beyond 32 bits (damaged files only) sort last among equal starts.
void sort_compact(EventColumns* events) {
  const size_t n = events->size();
  auto before = [&](size_t a, size_t b) {
    const EventRef x = (*events)[a];
    const EventRef y = (*events)[b];
    if (x.device != y.device) return x.device < y.device;
    if (x.stream != y.stream) return x.stream < y.stream;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    return events->seq(a) < events->seq(b);
  };
  size_t i = 1;
  while (i < n && !before(i, i - 1)) ++i;
  if (i >= n) return;
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), before);
  events->permute(order);
}

}  // namespace

Status SqliteTraceStore::read_compact_events(int64_t run_id, CompactTrace* trace) {
  EventColumns& events = trace->events;
  if (db_.table_exists("event_chunks")) {
    SL_ASSIGN_OR_RETURN(Statement stmt, db_.prepare(
        "SELECT device, stream, event_count, data FROM event_chunks WHERE run_id = ? "
        "ORDER BY device, stream, start_ns, first_seq"));
    stmt.bind(1, run_id);
    Status status;
    while (stmt.step(&status)) {
      const size_t before = events.size();
      const bool ok = for_each_chunk_event(stmt.column_blob(3), stmt.column_int32(0), stmt.column_int32(1),
                                           stmt.column_int(2),
                                           [&](const Event& e, int64_t seq) { events.push_back(e, seq); });
      if (!ok) {
        events.truncate(before);
        trace->add_counter("store_corrupt_chunk", 1, "stored event chunks that could not be decoded (events lost)");
      }
    }
    SL_RETURN_IF_ERROR(status);
  }
  // Version 1 runs: one row per event (rare and small; read as Events first).
  std::vector<Event> legacy;
  std::vector<int64_t> legacy_seqs;
  SL_RETURN_IF_ERROR(read_legacy_rows(run_id, &legacy, &legacy_seqs));
  for (size_t i = 0; i < legacy.size(); ++i) events.push_back(legacy[i], legacy_seqs[i]);
  return ok_status();
}

Status SqliteTraceStore::resolve_compact_strings(CompactTrace* trace) {
  EventColumns& events = trace->events;
  StringIdMap strings;
  for (size_t i = 0; i < events.size(); ++i) {
    strings.note(events.name(i));
    strings.note(events.instruction(i));
  }
  int64_t missing = 0;
  SL_RETURN_IF_ERROR(look_up_strings(strings, trace->strings, &missing));
  if (missing > 0) trace->add_counter("store_missing_string", missing, "events naming a string id the database lacks");
  for (size_t i = 0; i < events.size(); ++i) {
    events.set_strings(i, strings.get(events.name(i)), strings.get(events.instruction(i)));
  }
  return ok_status();
}

Result<CompactTrace> SqliteTraceStore::load_compact(int64_t run_id) {
  // One read transaction, as load_trace.
  ReadTransaction snapshot(db_);
  SL_RETURN_IF_ERROR(snapshot.begin());

  SL_ASSIGN_OR_RETURN(RunInfo info, run_info(run_id));
  CompactTrace trace;
  SL_ASSIGN_OR_RETURN(const size_t expected, stored_event_bound(run_id, info.event_count));
  // The columns are all the fresh memory a load touches (no huge-page
  // advice: on the dev box it made the kernel's page zeroing a third of the
  // load instead of 3%), and the chunks pass through a small page cache
  // instead of the connection's 64 MB (one scan reuses no page).
  trace.events.reserve(expected);
  SL_RETURN_IF_ERROR(db_.exec("PRAGMA cache_size = -2048"));
  Status read = read_compact_events(run_id, &trace);
  SL_RETURN_IF_ERROR(db_.exec(kCacheSizePragma));
  SL_RETURN_IF_ERROR(read);
  if (trace.events.size() >= SeqIndex::kNone) {
    return invalid_input(fmt::format("{}: run {} holds more than 2^32 events", db_.path(), run_id));
  }
  if (trace.events.track_count() > EventColumns::kMaxTracks) {
    return invalid_input(fmt::format("{}: run {} has more than 2^24 (device, stream) tracks", db_.path(), run_id));
  }
  sort_compact(&trace.events);
  SL_RETURN_IF_ERROR(resolve_compact_strings(&trace));
  int64_t dangling = 0;
  SL_RETURN_IF_ERROR(read_dependencies(run_id, SeqIndex(trace.events.seqs(), EventColumns::kNoSeq),
                                       &trace.dependencies, &dangling));
  if (dangling > 0) {
    trace.add_counter("store_dangling_dependency", dangling, "dependency edges naming an event that is not stored");
  }
  SL_RETURN_IF_ERROR(read_counters(run_id, &trace.counters));
  return trace;
}

Result<TraceStore::EventExtras> SqliteTraceStore::load_event_extras(int64_t run_id, int32_t device, int32_t stream,
                                                                    int64_t seq) {
  // A chunk holds one append's events of one track: only chunks whose seq
  // range covers `seq` can hold it (the index narrows the scan to the track).
  if (db_.table_exists("event_chunks")) {
    SL_ASSIGN_OR_RETURN(Statement stmt, db_.prepare(
        "SELECT event_count, data FROM event_chunks WHERE run_id = ? AND device = ? AND stream = ? "
        "AND first_seq <= ? AND last_seq >= ?"));
    stmt.bind(1, run_id);
    stmt.bind(2, static_cast<int64_t>(device));
    stmt.bind(3, static_cast<int64_t>(stream));
    stmt.bind(4, seq);
    stmt.bind(5, seq);
    Status status;
    while (stmt.step(&status)) {
      std::optional<EventExtras> found;
      for_each_chunk_event(stmt.column_blob(1), device, stream, stmt.column_int(0), [&](const Event& e, int64_t s) {
        if (s == seq && !found) found = EventExtras{e.bytes, e.flops, e.correlation};
      });
      if (found) return *found;
    }
    SL_RETURN_IF_ERROR(status);
  }
  if (db_.table_exists("events")) {
    SL_ASSIGN_OR_RETURN(Statement row, db_.prepare(
        "SELECT bytes, flops, correlation FROM events WHERE run_id = ? AND device = ? AND stream = ? AND seq = ?"));
    row.bind(1, run_id);
    row.bind(2, static_cast<int64_t>(device));
    row.bind(3, static_cast<int64_t>(stream));
    row.bind(4, seq);
    Status status;
    if (row.step(&status)) return EventExtras{row.column_int(0), row.column_int(1), row.column_int(2)};
    SL_RETURN_IF_ERROR(status);
  }
  return not_found(fmt::format("{}: run {} has no event {} on device {} stream {}", db_.path(), run_id, seq, device,
                               stream));
}

}  // namespace sl::trace::store
