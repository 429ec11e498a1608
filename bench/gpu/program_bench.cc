#include "bench/gpu/program_bench.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "core/exec/cuda/cuda_backend.h"
#include "core/hlo/parser.h"
#include "core/sched/lowering.h"

namespace sl::bench {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Result<exec::RunOutput> run_cuda(const std::string& text, const std::string& name,
                                 const sched::StreamOverrides& overrides, int warmup, int iterations, bool trace,
                                 bool one_graph = false) {
  SL_ASSIGN_OR_RETURN(auto module, hlo::parse_program(text, name));
  sched::LowerOptions lower_options;
  lower_options.overrides = overrides;
  SL_ASSIGN_OR_RETURN(auto lowered, sched::lower(module, lower_options));
  SL_ASSIGN_OR_RETURN(auto backend, exec::make_cuda_backend({.trace = trace}));
  exec::RunOptions o;
  o.init = exec::InitMode::kRandom;
  o.seed = 1;
  o.warmup = warmup;
  o.iterations = iterations;
  if (one_graph) o.command_buffers = one_graph_per_device(lowered);
  SL_ASSIGN_OR_RETURN(auto out, backend->run(lowered, o));
  if (!out.notes.empty()) return runtime_error("the program did not run as one graph: " + out.notes.front());
  return out;
}

}  // namespace

std::vector<std::vector<sched::CommandBuffer>> one_graph_per_device(const sched::LoweredProgram& program) {
  std::vector<std::vector<sched::CommandBuffer>> out;
  for (const sched::DeviceProgram& dp : program.devices) {
    sched::CommandBuffer g;
    std::map<int, int> last_on_stream;  // stream -> its latest node
    for (size_t i = 0; i < dp.thunks.size(); ++i) {
      const sched::Thunk& t = dp.thunks[i];
      if (t.kind != sched::ThunkKind::kKernel && t.kind != sched::ThunkKind::kGemm) continue;
      auto last = last_on_stream.find(t.stream);
      g.deps.push_back(last == last_on_stream.end() ? std::vector<int>{} : std::vector<int>{last->second});
      last_on_stream[t.stream] = static_cast<int>(g.thunks.size());
      g.thunks.push_back(static_cast<uint32_t>(i));
    }
    out.push_back({std::move(g)});
  }
  return out;
}

Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalid_input("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Result<ProgramTiming> time_program(const std::string& text, const std::string& name,
                                   const sched::StreamOverrides& overrides, int iterations) {
  SL_ASSIGN_OR_RETURN(auto out, run_cuda(text, name, overrides, 3, iterations, true));
  // (iteration, device) -> (first start, last end). An iteration takes its
  // longest device's span, each device from its own start, as `streamlens
  // run` measures a makespan: the devices' host threads start apart by up to
  // a few hundred microseconds, which is not the program's time.
  std::map<std::pair<int, int>, std::pair<int64_t, int64_t>> span;
  std::vector<double> gemm_ms, collective_ms;
  for (const auto& e : out.trace.events) {
    auto [it, inserted] = span.try_emplace({e.iteration, e.device}, e.start_ns, e.end_ns);
    if (!inserted) {
      it->second.first = std::min(it->second.first, e.start_ns);
      it->second.second = std::max(it->second.second, e.end_ns);
    }
    if (e.kind == trace::EventKind::kGemm) gemm_ms.push_back(e.duration_ns() / 1e6);
    if (e.kind == trace::EventKind::kCollective) collective_ms.push_back(e.duration_ns() / 1e6);
  }
  if (span.empty()) return runtime_error("the tracer recorded no attributed GPU work for " + name);
  std::map<int, double> longest;  // iteration -> its longest device span, ms
  for (const auto& [key, s] : span) longest[key.first] = std::max(longest[key.first], (s.second - s.first) / 1e6);
  std::vector<double> iter_ms;
  for (const auto& [i, ms] : longest) iter_ms.push_back(ms);
  ProgramTiming t;
  t.median_iteration_ms = median(iter_ms);
  t.min_iteration_ms = *std::min_element(iter_ms.begin(), iter_ms.end());
  t.iterations = iter_ms.size();
  t.events = out.trace.events.size();
  t.median_gemm_ms = median(gemm_ms);
  t.median_collective_ms = median(collective_ms);
  return t;
}

Result<WallPerIteration> wall_per_iteration(const std::string& text, bool trace, int iterations, int repeats,
                                            bool one_graph) {
  auto wall = [&](int n) -> Result<WallPerIteration> {
    auto t0 = std::chrono::steady_clock::now();
    SL_ASSIGN_OR_RETURN(auto out, run_cuda(text, "overhead.hlo", {}, 0, n, trace, one_graph));
    return WallPerIteration{
        .iterations_ms = out.iterations_wall_ms,
        .run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()};
  };
  SL_RETURN_IF_ERROR(wall(2).status());  // pays the process's one-time CUDA and cuBLAS set-up
  std::vector<double> iterations_ms, run_ms;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    SL_ASSIGN_OR_RETURN(WallPerIteration shortest, wall(2));
    SL_ASSIGN_OR_RETURN(WallPerIteration longest, wall(iterations + 2));
    iterations_ms.push_back((longest.iterations_ms - shortest.iterations_ms) / iterations);
    run_ms.push_back((longest.run_ms - shortest.run_ms) / iterations);
  }
  return WallPerIteration{.iterations_ms = median(iterations_ms), .run_ms = median(run_ms)};
}

}  // namespace sl::bench
