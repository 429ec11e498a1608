// Front-end pipeline throughput on a generated 100,000-instruction module:
// parse alone, and parse + verify + lower (docs/architecture.md flow). Counters
// report input MB/s and instructions/s.
//
//   build-rel/bench/pipeline_bench [--benchmark_filter=Parse]

#include <benchmark/benchmark.h>

#include <string>

#include "core/hlo/parser.h"
#include "core/hlo/printer.h"
#include "core/hlo/verifier.h"
#include "core/sched/lowering.h"

namespace {

constexpr int kInstructions = 100000;

// A realistic mix in blocks of 10: elementwise ops, a dot, a tuple
// all-gather-start/done on the communication stream, and an async GEMM on
// compute stream 1, with XLA-style layouts, metadata and JSON configs.
std::string make_module(int instructions, int* count) {
  std::string text;
  text.reserve(static_cast<size_t>(instructions) * 160);
  text +=
      "HloModule pipeline_bench, is_scheduled=true, replica_count=2\n\n"
      "%gemm (a: f32[64,64], b: f32[64,64]) -> f32[64,64] {\n"
      "  %a = f32[64,64]{1,0} parameter(0)\n"
      "  %b = f32[64,64]{1,0} parameter(1)\n"
      "  ROOT %d = f32[64,64]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "}\n\n"
      "ENTRY %main (p0: f32[64,64], p1: f32[64,64]) -> f32[64,64] {\n"
      "  %p0 = f32[64,64]{1,0} parameter(0)\n"
      "  %p1 = f32[64,64]{1,0} parameter(1)\n"
      "  %x0 = f32[64,64]{1,0} add(f32[64,64]{1,0} %p0, f32[64,64]{1,0} %p1)\n";
  int n = 3;
  int blocks = (instructions + 9) / 10;  // at least `instructions` in all
  for (int i = 0; i < blocks; ++i) {
    std::string s = std::to_string(i);
    std::string x = "%x" + s;
    text += "  %a" + s + " = f32[64,64]{1,0} add(f32[64,64]{1,0} " + x + ", f32[64,64]{1,0} %p1)\n";
    text += "  %m" + s + " = f32[64,64]{1,0} multiply(%a" + s + ", %p0), metadata={op_name=\"jit(step)/mul\" source_line=" + s + "}\n";
    text += "  %d" + s + " = f32[64,64]{1,0} dot(%m" + s + ", %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
    text += "  %ags" + s + " = ((f32[64,64]{1,0}, f32[64,64]{1,0}), (f32[128,64]{1,0}, f32[128,64]{1,0})) all-gather-start(%d" +
            s + ", %a" + s + "), channel_id=" + std::to_string(i + 1) +
            ", replica_groups={{0,1}}, dimensions={0}, backend_config={\"operation_queue_id\":\"0\",\"collective_backend_config\":{\"is_sync\":false}}\n";
    text += "  %s" + s + " = ((f32[64,64]{1,0}, f32[64,64]{1,0}), f32[64,64]{1,0}, s32[]) async-start(%m" + s +
            ", %p1), calls=%gemm, backend_config={\"operation_queue_id\":\"1\"}\n";
    text += "  %n" + s + " = f32[64,64]{1,0} negate(%d" + s + ")\n";
    text += "  %sd" + s + " = f32[64,64]{1,0} async-done(%s" + s + ")\n";
    text += "  %agd" + s + " = (f32[128,64]{1,0}, f32[128,64]{1,0}) all-gather-done(%ags" + s + ")\n";
    text += "  %g" + s + " = f32[128,64]{1,0} get-tuple-element(%agd" + s + "), index=0\n";
    text += "  %x" + std::to_string(i + 1) + " = f32[64,64]{1,0} add(%sd" + s + ", %n" + s + ")\n";
    n += 10;
  }
  text += "  ROOT %out = f32[64,64]{1,0} copy(%x" + std::to_string(blocks) + ")\n}\n";
  *count = n + 1 + 3;  // + copy + the gemm computation
  return text;
}

const std::string& module_text(int* count) {
  static int instructions = 0;
  static const std::string text = make_module(kInstructions, &instructions);
  *count = instructions;
  return text;
}

void set_counters(benchmark::State& state, size_t bytes, int instructions) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
  state.counters["MB/s"] = benchmark::Counter(static_cast<double>(bytes) / 1e6, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["instructions/s"] =
      benchmark::Counter(static_cast<double>(instructions), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["instructions"] = instructions;
}

// Skips the benchmark with the status's message; true when it is ok.
bool ok_or_skip(benchmark::State& state, const sl::Status& status) {
  if (status.is_ok()) return true;
  state.SkipWithError(status.message().substr(0, 300).c_str());
  return false;
}

void BM_Parse(benchmark::State& state) {
  int count = 0;
  const std::string& text = module_text(&count);
  for (auto _ : state) {
    auto module = sl::hlo::parse_program(text, "bench.hlo");
    if (!ok_or_skip(state, module.status())) return;
    benchmark::DoNotOptimize(module.value().computations.size());
  }
  set_counters(state, text.size(), count);
}
BENCHMARK(BM_Parse)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

void BM_ParseVerifyLower(benchmark::State& state) {
  int count = 0;
  const std::string& text = module_text(&count);
  for (auto _ : state) {
    auto module = sl::hlo::parse_program(text, "bench.hlo");
    if (!ok_or_skip(state, module.status())) return;
    if (!ok_or_skip(state, sl::hlo::verify_status(module.value()))) return;
    auto lowered = sl::sched::lower(module.value(), sl::sched::LowerOptions{});
    if (!ok_or_skip(state, lowered.status())) return;
    benchmark::DoNotOptimize(lowered.value().devices.size());
  }
  set_counters(state, text.size(), count);
}
BENCHMARK(BM_ParseVerifyLower)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

// The phases alone, on a module parsed once, to see where the time goes.
void BM_Verify(benchmark::State& state) {
  int count = 0;
  const std::string& text = module_text(&count);
  auto module = sl::hlo::parse_program(text, "bench.hlo");
  if (!ok_or_skip(state, module.status())) return;
  for (auto _ : state) {
    if (!ok_or_skip(state, sl::hlo::verify_status(module.value()))) return;
  }
  set_counters(state, text.size(), count);
}
BENCHMARK(BM_Verify)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

void BM_Lower(benchmark::State& state) {
  int count = 0;
  const std::string& text = module_text(&count);
  auto module = sl::hlo::parse_program(text, "bench.hlo");
  if (!ok_or_skip(state, module.status())) return;
  for (auto _ : state) {
    auto lowered = sl::sched::lower(module.value(), sl::sched::LowerOptions{});
    if (!ok_or_skip(state, lowered.status())) return;
    benchmark::DoNotOptimize(lowered.value().devices.size());
  }
  set_counters(state, text.size(), count);
}
BENCHMARK(BM_Lower)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

void BM_Print(benchmark::State& state) {
  int count = 0;
  const std::string& text = module_text(&count);
  auto module = sl::hlo::parse_program(text, "bench.hlo");
  if (!ok_or_skip(state, module.status())) return;
  size_t bytes = 0;
  for (auto _ : state) {
    std::string printed = sl::hlo::print_module(module.value());
    bytes = printed.size();
    benchmark::DoNotOptimize(printed.data());
  }
  set_counters(state, bytes, count);
}
BENCHMARK(BM_Print)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
