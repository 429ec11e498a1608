// SQL over every event: `select name, sum(dur_ns) from events group by name`
// through the `events` virtual table on a 1,000,000-event run, and the same
// with `where run_id = N` on a database that holds a second, equally large
// run (push-down: only that run's chunks are decoded).
// Target (Release): the group-by over 1M events in <= 0.5 s.

#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "bench/capture_like_trace.h"
#include "core/trace/store/events_vtab.h"
#include "core/trace/store/trace_store.h"

namespace {

using namespace sl::trace;

constexpr int64_t kEvents = 1000000;

// Capture-like: 2 devices x 4 streams, ~1000 kernel and instruction names.
Trace make_trace(int64_t n) { return sl::bench::capture_like_trace(n); }

struct Fixture {
  std::string path = "/tmp/sl_query_bench_" + std::to_string(getpid()) + ".db";
  sqlite3* db = nullptr;
  Fixture() {
    cleanup();
    auto store = TraceStore::open(path);
    RunInfo info;
    info.backend = "bench";
    Trace trace = make_trace(kEvents);
    if (!store || !(*store)->save_run(info, "HloModule a", {}, trace) ||
        !(*store)->save_run(info, "HloModule b", {}, trace)) {
      return;
    }
    store->reset();
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sl::trace::store::register_events_table(db, nullptr);
  }
  ~Fixture() {
    sqlite3_close_v2(db);
    cleanup();
  }
  void cleanup() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

// Runs `sql` to completion; returns the number of result rows, -1 on error.
int64_t run(sqlite3* db, const char* sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) return -1;
  int64_t rows = 0;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) ++rows;
  sqlite3_finalize(s);
  return rc == SQLITE_DONE ? rows : -1;
}

void query(benchmark::State& state, const char* sql, int64_t events) {
  sqlite3* db = fixture().db;
  if (!db) {
    state.SkipWithError("no database");
    return;
  }
  for (auto _ : state) {
    if (run(db, sql) != 997) {
      state.SkipWithError(sqlite3_errmsg(db));
      return;
    }
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_GroupByNameOneRun(benchmark::State& state) {
  query(state, "select name, sum(dur_ns) from events where run_id = 1 group by name", kEvents);
}
BENCHMARK(BM_GroupByNameOneRun)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

void BM_GroupByNameAllRuns(benchmark::State& state) {
  query(state, "select name, sum(dur_ns) from events group by name", 2 * kEvents);
}
BENCHMARK(BM_GroupByNameAllRuns)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
