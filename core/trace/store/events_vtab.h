#pragma once
// The `events` virtual table: every event of every run as one SQL row,
// decoded from event_chunks (and from the schema-1 `events` table for runs
// recorded then), so plain SQL, pandas and notebooks see what `show` sees.
// Columns: run_id, device, stream, stream_kind, kind, name, instruction,
// start_ns, end_ns, dur_ns, bytes, flops, correlation, iteration, step.
// `where run_id = N` (or `run_id in (...)`) reads only that run's chunks.
// docs/store.md describes it; the same code serves `streamlens query` and the
// loadable extension libstreamlens_sqlite (core/trace/store/extension/).

struct sqlite3;

namespace sl::trace::store {

// Registers the module `streamlens_events` on `db` and creates
// `temp.events` over the store in schema `main`. The temp table shadows the
// store's own (schema 1) `events` table for unqualified names; `main.events`
// still names that one. Returns an SQLite result code; on failure *error
// (when given) receives a message to free with sqlite3_free.
int register_events_table(sqlite3* db, char** error);

}  // namespace sl::trace::store
