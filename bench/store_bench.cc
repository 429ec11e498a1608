// Trace store throughput: insert 1,000,000 events (save_run: batched
// transactions, prepared statements) and load them back in timeline order.
// Reports events/s and bytes per event (database file size / events).
// Targets (Release): >= 1M events/s inserted, a 1M-event load under 1 s.

#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "core/trace/store/trace_store.h"

namespace {

using namespace sl::trace;

constexpr int64_t kEvents = 1000000;

// A capture-like trace: 2 devices, 3 compute streams and one communication
// stream each, ~2000 distinct kernel names and instruction names.
Trace make_trace(int64_t n) {
  Trace t;
  t.events.reserve(static_cast<size_t>(n));
  const EventKind kinds[] = {EventKind::kGemm, EventKind::kElementwise, EventKind::kCollective, EventKind::kCopy};
  std::vector<int64_t> clock(8, 0);
  for (int64_t i = 0; i < n; ++i) {
    Event e;
    e.device = static_cast<int32_t>(i % 2);
    int k = static_cast<int>((i / 2) % 4);
    e.kind = kinds[k];
    e.stream = k == 2 ? sl::sched::kCommStreamBase : k % 3;
    e.stream_kind = sl::sched::stream_kind(e.stream);
    e.name = t.strings.intern("kernel_" + std::to_string(i % 997));
    e.instruction = t.strings.intern("instr." + std::to_string(i % 1009));
    int64_t& c = clock[static_cast<size_t>(e.device * 4 + k)];
    e.start_ns = c + 50;
    e.end_ns = e.start_ns + 1000 + (i % 300);
    c = e.end_ns;
    e.bytes = (i % 7) * 4096;
    e.flops = (i % 5) * 1000000;
    e.correlation = i + 1;
    t.events.push_back(e);
  }
  for (uint32_t i = 0; i + 3 < static_cast<uint32_t>(n); i += 50) t.dependencies.push_back({i, i + 3});
  return t;
}

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
