// Simulator throughput: 1,000,000 thunks over 8 devices and 4 streams
// (3 compute + 1 communication), with cross-stream waits and all-reduces.
// Reports thunks/s and bytes per thunk (trace output and input program).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "core/sched/thunk.h"
#include "sim/device_model.h"
#include "sim/engine.h"

namespace {

using sl::sched::Thunk;
using sl::sched::ThunkKind;

constexpr int kDevices = 8;
constexpr int64_t kThunks = 1'000'000;
constexpr int kComm = sl::sched::kCommStreamBase;

struct Builder {
  std::vector<Thunk>* out;
  int events = 0;
  void push(ThunkKind kind, int stream, const std::string& name) {
    // Thunks only view their names (core/sched/thunk.h): one live copy of each.
    static std::unordered_set<std::string> names;
    Thunk& t = out->emplace_back();
    t.kind = kind;
    t.stream = stream;
    t.attributed_name = *names.insert(name).first;
  }
  void gemm(int stream, int64_t m, const std::string& name) {
    push(ThunkKind::kGemm, stream, name);
    Thunk& t = out->back();
    t.gemm = {m, 4096, 4096, 1, sl::hlo::PrimitiveType::kBF16};
    t.flops = 2 * m * 4096 * 4096;
    t.bytes_accessed = 2 * (m * 4096 * 2 + 4096 * 4096);
  }
  void kernel(int stream, int64_t bytes, const std::string& name) {
    push(ThunkKind::kKernel, stream, name);
    out->back().bytes_accessed = bytes;
    out->back().flops = bytes / 2;
  }
  void sync(int from, int to) {  // `to` waits for everything issued on `from` so far
    int e = events++ % 64;
    push(ThunkKind::kRecordEvent, from, "");
    out->back().event = e;
    push(ThunkKind::kWaitEvent, to, "");
    out->back().event = e;
  }
};

std::vector<sl::sched::DeviceProgram> make_programs() {
  std::vector<sl::sched::DeviceProgram> programs(kDevices);
  // The collectives' device group, viewed by every thunk.
  auto storage = std::make_shared<sl::sched::ThunkStorage>();
  for (int d = 0; d < kDevices; ++d) storage->device_ids.push_back(d);
  const std::span<const int64_t> group(storage->device_ids);
  for (int d = 0; d < kDevices; ++d) {
    auto& p = programs[static_cast<size_t>(d)];
    p.device = d;
    p.replica = d;
    p.num_events = 64;
    p.storage = storage;
    p.thunks.reserve(kThunks / kDevices + 32);
    Builder b{&p.thunks};
    for (int64_t layer = 0; static_cast<int64_t>(p.thunks.size()) < kThunks / kDevices; ++layer) {
      std::string tag = std::to_string(layer % 97);
      // An async GEMM on stream 1 beside work on stream 0, joined afterwards.
      b.sync(0, 1);
      b.gemm(1, 1024 + 256 * (layer % 4), "async_gemm." + tag);
      b.gemm(0, 2048, "gemm." + tag);
      b.kernel(0, 64 << 20, "add." + tag);
      b.sync(1, 0);
      // Elementwise work on stream 2 every other layer.
      if (layer % 2 == 0) {
        b.sync(0, 2);
        b.kernel(2, 16 << 20, "fusion." + tag);
        b.sync(2, 0);
      }
      // An async all-reduce on the communication stream every 4th layer.
      if (layer % 4 == 0) {
        b.sync(0, kComm);
        b.push(ThunkKind::kCollective, kComm, "all-reduce." + tag);
        Thunk& t = p.thunks.back();
        t.collective.op = sl::hlo::Opcode::kAllReduce;
        t.collective.group = group;
        t.collective.rank_in_group = d;
        t.collective.bytes_in = t.collective.bytes_out = 32 << 20;
        t.collective.rendezvous_id = layer;
        b.kernel(0, 8 << 20, "scale." + tag);
        b.sync(kComm, 0);
      }
    }
  }
  return programs;
}

size_t input_bytes(const std::vector<sl::sched::DeviceProgram>& programs) {
  // Thunks are flat; what their views share is counted once.
  size_t bytes = 0;
  std::unordered_set<const sl::sched::ThunkStorage*> storages;
  for (const auto& p : programs) {
    bytes += p.thunks.size() * sizeof(Thunk);
    if (p.storage && storages.insert(p.storage.get()).second) {
      bytes += p.storage->slices.size() * sizeof(sl::sched::BufferSlice) + p.storage->device_ids.size() * sizeof(int64_t);
    }
  }
  return bytes;
}

void BM_Simulate1MThunks(benchmark::State& state) {
  auto programs = make_programs();
  int64_t thunks = 0;
  for (const auto& p : programs) thunks += static_cast<int64_t>(p.thunks.size());
  sl::Result<sl::sim::DeviceModel> model = sl::sim::load_device_model("h200");
  if (!model.is_ok()) {
    state.SkipWithError(model.status().message().c_str());
    return;
  }
  size_t trace_bytes = 0, events = 0, deps = 0;
  int64_t makespan = 0;
  for (auto _ : state) {
    auto trace = sl::sim::simulate(programs, *model);
    if (!trace.is_ok()) {
      state.SkipWithError(trace.status().message().c_str());
      return;
    }
    events = trace->events.size();
    deps = trace->dependencies.size();
    trace_bytes = trace->events.capacity() * sizeof(sl::trace::Event) +
                  trace->dependencies.capacity() * sizeof(sl::trace::Dependency);
    for (const auto& s : trace->strings.all()) trace_bytes += s.capacity() + sizeof(std::string);
    makespan = trace->makespan_ns();
    benchmark::DoNotOptimize(trace);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.SetItemsProcessed(state.iterations() * thunks);
  state.counters["thunks"] = static_cast<double>(thunks);
  state.counters["thunks_per_s"] =
      benchmark::Counter(static_cast<double>(thunks), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["events"] = static_cast<double>(events);
  state.counters["dependencies"] = static_cast<double>(deps);
  state.counters["trace_B_per_thunk"] = static_cast<double>(trace_bytes) / static_cast<double>(thunks);
  state.counters["input_B_per_thunk"] = static_cast<double>(input_bytes(programs)) / static_cast<double>(thunks);
  state.counters["max_rss_MB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  state.counters["makespan_ms"] = static_cast<double>(makespan) / 1e6;
}
BENCHMARK(BM_Simulate1MThunks)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
