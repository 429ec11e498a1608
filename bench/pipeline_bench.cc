// Front-end pipeline throughput, stage by stage (parse, verify, lower, and
// the three together; print), on two inputs:
//   Generated: a 100,000-instruction module of a realistic mix (elementwise
//     chains, loop fusions, dots, async all-gathers on the communication
//     stream, async GEMMs on compute stream 1), XLA-style layouts, metadata
//     and JSON configs;
//   Dump: the largest real XLA dump in tests/corpus/jax (the bf16
//     transformer train step after optimizations, large size; the small one
//     when the large one is absent), or the file $SL_BENCH_DUMP.
// The target for parse + verify + lower is under 1 s on one core for each.
// Counters report input MB/s and instructions/s.
//
//   build/bench/bench/pipeline_bench [--benchmark_filter=Dump]

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include "core/hlo/parser.h"
#include "core/hlo/printer.h"
#include "core/hlo/verifier.h"
#include "core/sched/lowering.h"

namespace {

constexpr int kInstructions = 100000;

// Blocks of 16 instructions: 11 in the entry computation and a 5-instruction
// loop fusion computation of its own (XLA gives every fusion one).
std::string make_module(int instructions, int* count) {
  std::string callees;
  std::string entry;
  callees.reserve(static_cast<size_t>(instructions) * 60);
  entry.reserve(static_cast<size_t>(instructions) * 170);
  callees +=
      "HloModule pipeline_bench, is_scheduled=true, replica_count=2\n\n"
      "%gemm (a: f32[64,64], b: f32[64,64]) -> f32[64,64] {\n"
      "  %a = f32[64,64]{1,0} parameter(0)\n"
      "  %b = f32[64,64]{1,0} parameter(1)\n"
      "  ROOT %d = f32[64,64]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "}\n\n";
  entry +=
      "ENTRY %main (p0: f32[64,64], p1: f32[64,64]) -> f32[64,64] {\n"
      "  %p0 = f32[64,64]{1,0} parameter(0)\n"
      "  %p1 = f32[64,64]{1,0} parameter(1)\n"
      "  %x0 = f32[64,64]{1,0} add(f32[64,64]{1,0} %p0, f32[64,64]{1,0} %p1)\n";
  int n = 3 + 3;  // the gemm computation and the entry's first three
  int blocks = (instructions - n - 1 + 15) / 16;  // at least `instructions` in all
  for (int i = 0; i < blocks; ++i) {
    std::string s = std::to_string(i);
    std::string x = "%x" + s;
    callees += "%fused_" + s + " (fp0." + s + ": f32[64,64], fp1." + s + ": f32[64,64]) -> f32[64,64] {\n";
    callees += "  %fp0." + s + " = f32[64,64]{1,0} parameter(0)\n";
    callees += "  %fp1." + s + " = f32[64,64]{1,0} parameter(1)\n";
    callees += "  %fm." + s + " = f32[64,64]{1,0} multiply(%fp0." + s + ", %fp1." + s + ")\n";
    callees += "  %ft." + s + " = f32[64,64]{1,0} exponential(%fm." + s + ")\n";
    callees += "  ROOT %fa." + s + " = f32[64,64]{1,0} add(%ft." + s + ", %fp0." + s + ")\n}\n\n";
    entry += "  %a" + s + " = f32[64,64]{1,0} add(f32[64,64]{1,0} " + x + ", f32[64,64]{1,0} %p1)\n";
    entry += "  %m" + s + " = f32[64,64]{1,0} multiply(%a" + s + ", %p0), metadata={op_name=\"jit(step)/mul\" source_line=" + s + "}\n";
    entry += "  %f" + s + " = f32[64,64]{1,0} fusion(%m" + s + ", %a" + s + "), kind=kLoop, calls=%fused_" + s + "\n";
    entry += "  %d" + s + " = f32[64,64]{1,0} dot(%f" + s + ", %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
    entry += "  %ags" + s + " = ((f32[64,64]{1,0}, f32[64,64]{1,0}), (f32[128,64]{1,0}, f32[128,64]{1,0})) all-gather-start(%d" +
             s + ", %a" + s + "), channel_id=" + std::to_string(i + 1) +
             ", replica_groups={{0,1}}, dimensions={0}, backend_config={\"operation_queue_id\":\"0\",\"collective_backend_config\":{\"is_sync\":false}}\n";
    entry += "  %s" + s + " = ((f32[64,64]{1,0}, f32[64,64]{1,0}), f32[64,64]{1,0}, s32[]) async-start(%m" + s +
             ", %p1), calls=%gemm, backend_config={\"operation_queue_id\":\"1\"}\n";
    entry += "  %n" + s + " = f32[64,64]{1,0} negate(%d" + s + ")\n";
    entry += "  %sd" + s + " = f32[64,64]{1,0} async-done(%s" + s + ")\n";
    entry += "  %agd" + s + " = (f32[128,64]{1,0}, f32[128,64]{1,0}) all-gather-done(%ags" + s + ")\n";
    entry += "  %g" + s + " = f32[128,64]{1,0} get-tuple-element(%agd" + s + "), index=0\n";
    entry += "  %x" + std::to_string(i + 1) + " = f32[64,64]{1,0} add(%sd" + s + ", %n" + s + ")\n";
    n += 16;
  }
  entry += "  ROOT %out = f32[64,64]{1,0} copy(%x" + std::to_string(blocks) + ")\n}\n";
  *count = n + 1;
  return callees + entry;
}

// Instruction lines of an HLO text: "NAME = SHAPE OPCODE(" lines.
int count_instructions(const std::string& text) {
  int count = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    size_t eq = line.find(" = ");
    size_t paren = line.find('(');
    if (eq != std::string::npos && paren != std::string::npos && eq < paren && line.find("//") != 0) ++count;
  }
  return count;
}

struct Input {
  std::string name;       // as the file name in diagnostics
  std::string text;
  int instructions = 0;
  std::string missing;    // why there is no text
};

const Input& generated() {
  static const Input input = [] {
    Input in;
    in.name = "generated.hlo";
    in.text = make_module(kInstructions, &in.instructions);
    return in;
  }();
  return input;
}

const Input& dump() {
  static const Input input = [] {
    Input in;
    std::string path;
    if (const char* env = std::getenv("SL_BENCH_DUMP")) {
      path = env;
    } else {
      const std::string jax = std::string(SL_SOURCE_DIR) + "/tests/corpus/jax/";
      const std::string file = "/transformer_train_step_bf16/module_0000.jit_step.sm_9.0a_gpu_after_optimizations.txt";
      path = std::filesystem::exists(jax + "large" + file) ? jax + "large" + file : jax + "small" + file;
    }
    std::ifstream f(path, std::ios::binary);
    if (!f) {
      in.missing = "cannot read " + path;
      return in;
    }
    std::stringstream text;
    text << f.rdbuf();
    in.name = std::filesystem::path(path).filename().string();
    in.text = text.str();
    in.instructions = count_instructions(in.text);
    return in;
  }();
  return input;
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

// The input parsed once (for the stages after parse), or a skip.
const sl::hlo::Module* parsed_or_skip(benchmark::State& state, const Input& in) {
  if (!in.missing.empty()) {
    state.SkipWithError(in.missing.c_str());
    return nullptr;
  }
  static std::map<const Input*, sl::Result<sl::hlo::Module>> cache;
  auto it = cache.find(&in);
  if (it == cache.end()) it = cache.emplace(&in, sl::hlo::parse_program(in.text, in.name)).first;
  if (!ok_or_skip(state, it->second.status())) return nullptr;
  return &it->second.value();
}

void run_parse(benchmark::State& state, const Input& in) {
  if (!in.missing.empty()) return state.SkipWithError(in.missing.c_str());
  for (auto _ : state) {
    auto module = sl::hlo::parse_program(in.text, in.name);
    if (!ok_or_skip(state, module.status())) return;
    benchmark::DoNotOptimize(module.value().computations.size());
  }
  set_counters(state, in.text.size(), in.instructions);
}

void run_verify(benchmark::State& state, const Input& in) {
  const sl::hlo::Module* module = parsed_or_skip(state, in);
  if (!module) return;
  for (auto _ : state) {
    if (!ok_or_skip(state, sl::hlo::verify_status(*module))) return;
  }
  set_counters(state, in.text.size(), in.instructions);
}

void run_lower(benchmark::State& state, const Input& in) {
  const sl::hlo::Module* module = parsed_or_skip(state, in);
  if (!module) return;
  for (auto _ : state) {
    auto lowered = sl::sched::lower(*module, sl::sched::LowerOptions{});
    if (!ok_or_skip(state, lowered.status())) return;
    benchmark::DoNotOptimize(lowered.value().devices.size());
  }
  set_counters(state, in.text.size(), in.instructions);
}

void run_parse_verify_lower(benchmark::State& state, const Input& in) {
  if (!in.missing.empty()) return state.SkipWithError(in.missing.c_str());
  for (auto _ : state) {
    auto module = sl::hlo::parse_program(in.text, in.name);
    if (!ok_or_skip(state, module.status())) return;
    if (!ok_or_skip(state, sl::hlo::verify_status(module.value()))) return;
    auto lowered = sl::sched::lower(module.value(), sl::sched::LowerOptions{});
    if (!ok_or_skip(state, lowered.status())) return;
    benchmark::DoNotOptimize(lowered.value().devices.size());
  }
  set_counters(state, in.text.size(), in.instructions);
}

void run_print(benchmark::State& state, const Input& in) {
  const sl::hlo::Module* module = parsed_or_skip(state, in);
  if (!module) return;
  size_t bytes = 0;
  for (auto _ : state) {
    std::string printed = sl::hlo::print_module(*module);
    bytes = printed.size();
    benchmark::DoNotOptimize(printed.data());
  }
  set_counters(state, bytes, in.instructions);
}

// BM_<Stage>/<Input>, e.g. BM_ParseVerifyLower/Dump.
const bool kRegistered = [] {
  using Fn = void (*)(benchmark::State&, const Input&);
  const std::pair<const char*, Fn> stages[] = {{"BM_Parse", run_parse},
                                               {"BM_Verify", run_verify},
                                               {"BM_Lower", run_lower},
                                               {"BM_ParseVerifyLower", run_parse_verify_lower},
                                               {"BM_Print", run_print}};
  const std::pair<const char*, const Input& (*)()> inputs[] = {{"Generated", generated}, {"Dump", dump}};
  for (const auto& [stage, fn] : stages) {
    for (const auto& [input, get] : inputs) {
      benchmark::RegisterBenchmark((std::string(stage) + "/" + input).c_str(),
                                   [fn = fn, get = get](benchmark::State& state) { fn(state, get()); })
          ->Unit(benchmark::kMillisecond)
          ->MeasureProcessCPUTime()
          ->UseRealTime();
    }
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
