// Trace store throughput: insert 1,000,000 events (save_run: batched
// transactions, prepared statements) and load them back in timeline order.
// Reports events/s and bytes per event (database file size / events).
// Targets (Release): >= 1M events/s inserted, a 1M-event load under 1 s.

#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "bench/capture_like_trace.h"
#include "core/trace/store/trace_store.h"

namespace {

using namespace sl::trace;

constexpr int64_t kEvents = 1000000;

Trace make_trace(int64_t n) { return sl::bench::capture_like_trace(n); }

std::string scratch_path(const char* tag) {
  return "/tmp/sl_store_bench_" + std::to_string(getpid()) + "_" + tag + ".db";
}

void remove_db(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
}

int64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

void BM_StoreInsert(benchmark::State& state) {
  Trace trace = make_trace(state.range(0));
  std::string path = scratch_path("insert");
  int64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    remove_db(path);
    auto store = TraceStore::open(path);
    if (!store) {
      state.SkipWithError(store.status().message().c_str());
      return;
    }
    RunInfo info;
    info.backend = "bench";
    state.ResumeTiming();
    auto id = (*store)->save_run(info, "HloModule bench", {}, trace);
    if (!id) {
      state.SkipWithError(id.status().message().c_str());
      return;
    }
    state.PauseTiming();
    store->reset();  // closes the connection: the WAL is checkpointed into the file
    bytes = file_size(path);
    state.ResumeTiming();
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes/event"] = static_cast<double>(bytes) / static_cast<double>(state.range(0));
  remove_db(path);
}
BENCHMARK(BM_StoreInsert)->Arg(kEvents)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_StoreLoad(benchmark::State& state) {
  std::string path = scratch_path("load");
  remove_db(path);
  int64_t run = 0;
  {
    auto store = TraceStore::open(path);
    RunInfo info;
    info.backend = "bench";
    auto id = (*store)->save_run(info, "HloModule bench", {}, make_trace(state.range(0)));
    if (!id) {
      state.SkipWithError(id.status().message().c_str());
      return;
    }
    run = *id;
  }
  auto store = TraceStore::open(path, TraceStore::Mode::kReadOnly);
  for (auto _ : state) {
    auto trace = (*store)->load_trace(run);
    if (!trace || static_cast<int64_t>(trace->events.size()) != state.range(0)) {
      state.SkipWithError("load failed");
      return;
    }
    benchmark::DoNotOptimize(trace->events.data());
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes/event"] = static_cast<double>(file_size(path)) / static_cast<double>(state.range(0));
  remove_db(path);
}
BENCHMARK(BM_StoreLoad)->Arg(kEvents)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
