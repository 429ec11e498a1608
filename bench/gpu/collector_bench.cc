// The tracer's own cost per kernel, without a GPU: what the cuda backend pays
// per launch (register_launch), what CUPTI's worker thread pays per record
// (on_activity), and what turning a run's records into a trace costs per
// record (build_trace, run inside `streamlens run`'s wall time). The shape is
// gpu_bench's 10,000-kernel program: one stream, 10,000 thunks, 20
// iterations, the first tagged with external ids and the rest attributed by
// stream order.

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "cupti_tracer/collector.h"

namespace {

using namespace sl::cupti;

constexpr int kThunks = 10000;
constexpr int kIterations = 20;
constexpr uint32_t kCuptiStream = 7;
const char* const kKernel = "_ZN2sl4exec4cuda12_GLOBAL__N_113binary_kernelIfEEvPKvS4_Pvl";

std::vector<std::string> instruction_names() {
  std::vector<std::string> names;
  for (int i = 0; i < kThunks; ++i) names.push_back("add." + std::to_string(i));
  return names;
}

uint64_t external_id(int iteration, int thunk) { return static_cast<uint64_t>(iteration) * kThunks + thunk + 1; }

void register_all(ActivityCollector& c, const std::vector<std::string>& names) {
  c.reserve_launches(0, static_cast<size_t>(kThunks) * kIterations);  // as the cuda backend does
  for (int it = 0; it < kIterations; ++it) {
    for (int i = 0; i < kThunks; ++i) {
      c.register_launch(external_id(it, i), {.device = 0, .stream = 0, .kind = sl::trace::EventKind::kElementwise,
                                             .instruction = names[static_cast<size_t>(i)], .bytes = 3072,
                                             .iteration = it, .correlation = i + 1, .tagged = it == 0});
    }
  }
}

void feed_all(ActivityCollector& c) {
  uint64_t t = 1000;
  uint32_t correlation = 1;
  for (int it = 0; it < kIterations; ++it) {
    for (int i = 0; i < kThunks; ++i, ++correlation, t += 4000) {
      c.on_activity(KernelActivity{.device = 0, .stream = kCuptiStream, .correlation = correlation, .start_ns = t,
                                   .end_ns = t + 2000, .name = kKernel});
      if (it == 0) {
        c.on_activity(ExternalCorrelationActivity{.external_kind = 3, .external_id = external_id(it, i),
                                                  .correlation = correlation});
      }
    }
  }
}

void BM_RegisterLaunch(benchmark::State& state) {
  const auto names = instruction_names();
  for (auto _ : state) {
    ActivityCollector c;
    register_all(c, names);
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations() * kThunks * kIterations);
}
BENCHMARK(BM_RegisterLaunch)->Unit(benchmark::kMillisecond);

void BM_OnActivity(benchmark::State& state) {
  for (auto _ : state) {
    ActivityCollector c;
    feed_all(c);
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations() * kThunks * kIterations);
}
BENCHMARK(BM_OnActivity)->Unit(benchmark::kMillisecond);

void BM_BuildTrace(benchmark::State& state) {
  const auto names = instruction_names();
  ActivityCollector c;
  c.map_stream(0, kCuptiStream, 0);
  register_all(c, names);
  feed_all(c);
  for (auto _ : state) {
    sl::trace::Trace t = c.build_trace();
    if (t.events.size() != static_cast<size_t>(kThunks) * kIterations) state.SkipWithError("records left unattributed");
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations() * kThunks * kIterations);
}
BENCHMARK(BM_BuildTrace)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
