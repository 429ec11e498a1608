// Command buffers run as CUDA graphs (RunOptions::command_buffers): the
// results of stream launches, every kernel of a graph in the trace under its
// own instruction and iteration, and the graphs that must run as stream
// launches instead. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>

#include "app/common/command_buffer_setup.h"
#include "core/hlo/parser.h"
#include "tests/gpu/cuda_test_util.h"

namespace sl::exec {
namespace {

namespace fs = std::filesystem;

class CommandBuffer : public gpu_test::CudaTest {};

using gpu_test::counter;

Result<RunOutput> run_cuda(const sched::LoweredProgram& lowered, RunOptions options) {
  SL_ASSIGN_OR_RETURN(auto backend, make_cuda_backend({}));
  return backend->run(lowered, options);
}

// Outputs equal within `rel_tol` of each leaf's largest magnitude.
void expect_same_results(const RunOutput& a, const RunOutput& b, double rel_tol) {
  ASSERT_EQ(a.results.size(), b.results.size());
  for (size_t d = 0; d < a.results.size(); ++d) {
    ASSERT_EQ(a.results[d].outputs.size(), b.results[d].outputs.size());
    for (size_t l = 0; l < a.results[d].outputs.size(); ++l) {
      const auto& x = a.results[d].outputs[l].values;
      const auto& y = b.results[d].outputs[l].values;
      ASSERT_EQ(x.size(), y.size()) << "leaf " << l;
      double scale = 1.0;
      for (double v : x) scale = std::max(scale, std::fabs(v));
      for (size_t i = 0; i < x.size(); ++i) {
        if ((std::isnan(x[i]) && std::isnan(y[i])) || x[i] == y[i]) continue;
        ASSERT_NEAR(x[i], y[i], rel_tol * scale) << "device " << d << " leaf " << l << " element " << i;
      }
    }
  }
}

// Per (instruction, iteration, correlation): how many events the trace has.
std::map<std::tuple<std::string, int, int64_t>, int> events_by_instruction(const trace::Trace& t) {
  std::map<std::tuple<std::string, int, int64_t>, int> out;
  for (const trace::Event& e : t.events) ++out[{std::string(t.instruction_of(e)), e.iteration, e.correlation}];
  return out;
}

// A JAX dump with a command buffer, replayed with its graphs and without:
// the same results, and the same kernels under the same instructions.
void replay_jax_dump(const std::string& size, const std::string& program, double rel_tol) {
  const fs::path dir = fs::path(SL_SOURCE_DIR) / "tests/corpus/jax" / size / program;
  std::string path;  // module_0000.jit_NAME.sm_9.0a_gpu_after_optimizations.txt (jit_step, jit_f, ...)
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".sm_9.0a_gpu_after_optimizations.txt")) path = entry.path().string();
  }
  ASSERT_FALSE(path.empty()) << "no after-optimizations module in " << dir;
  auto module = hlo::parse_program_file(path);
  ASSERT_TRUE(module.is_ok()) << module.status().message();
  auto lowered = sched::lower(*module, {});
  ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
  auto cb = app::command_buffer_setup(path, *module, *lowered, "on");
  ASSERT_TRUE(cb.is_ok()) << cb.status().message();
  ASSERT_FALSE(cb->setup.graphs.empty());
  int64_t nodes = 0;
  for (const auto& g : cb->setup.graphs[0]) nodes += static_cast<int64_t>(g.thunks.size());
  ASSERT_GT(nodes, 0);

  RunOptions options;
  options.collect_results = true;
  options.warmup = 1;
  options.iterations = 3;
  auto off = run_cuda(*lowered, options);
  ASSERT_TRUE(off.is_ok()) << off.status().message();
  options.command_buffers = cb->setup.graphs;
  auto on = run_cuda(*lowered, options);
  ASSERT_TRUE(on.is_ok()) << on.status().message();

  expect_same_results(*off, *on, rel_tol);
  const trace::Trace& t = on->trace;
  EXPECT_EQ(counter(t, "command_buffer_fallbacks"), 0) << (on->notes.empty() ? "" : on->notes[0]);
  EXPECT_EQ(counter(t, "command_buffer_graphs"), static_cast<int64_t>(cb->setup.graphs[0].size()));
  EXPECT_EQ(counter(t, "command_buffer_graph_nodes"), nodes);
  EXPECT_GT(counter(t, "records_in_graphs"), 0);
  EXPECT_EQ(counter(t, "graph_records_unattributed"), -1);
  EXPECT_EQ(counter(t, "graph_records_missing"), -1);
  for (const trace::Event& e : t.events) {
    ASSERT_FALSE(t.instruction_of(e).empty()) << "kernel " << t.strings.get(e.name) << " has no instruction";
  }
  // The graphs' kernels under the instructions, iterations and thunks that
  // left them when launched on streams.
  EXPECT_EQ(events_by_instruction(t), events_by_instruction(off->trace));
}

TEST_F(CommandBuffer, MlpTrainStepAsGraphsGivesTheStreamResults) {
  replay_jax_dump("small", "mlp_train_step", 1e-5);
}

TEST_F(CommandBuffer, TransformerBf16StepAsGraphsGivesTheStreamResults) {
  replay_jax_dump("small", "transformer_train_step_bf16", 1e-2);
}

// One graph per loop trip, its nodes on three streams of streamlens' own
// assignment (async fusions): joined before each launch, forked after.
TEST_F(CommandBuffer, ScanRnnGraphsAcrossStreamsGiveTheStreamResults) {
  replay_jax_dump("small", "scan_rnn", 1e-5);
}

// The issue's program: XLA ran the whole step as one graph of 83 thunks.
TEST_F(CommandBuffer, LargeTransformerBf16StepAsOneGraphGivesTheStreamResults) {
  replay_jax_dump("large", "transformer_train_step_bf16", 1e-2);
}

constexpr const char* kChain = R"(HloModule chain
ENTRY e {
  p = f32[1024] parameter(0)
  a = f32[1024] add(p, p)
  b = f32[1024] multiply(a, p)
  c = f32[1024] subtract(b, a)
  ROOT d = f32[1024] add(c, b)
})";

struct Chain {
  hlo::Module module;
  sched::LoweredProgram lowered;
};

Chain lower_chain() {
  auto module = hlo::parse_program(kChain, "chain.hlo");
  EXPECT_TRUE(module.is_ok());
  Chain c{std::move(*module), {}};
  auto lowered = sched::lower(c.module, {});
  EXPECT_TRUE(lowered.is_ok());
  c.lowered = std::move(*lowered);
  return c;
}

// The work thunks of device 0, in program order.
std::vector<uint32_t> work_thunks(const sched::LoweredProgram& p) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < p.devices[0].thunks.size(); ++i) {
    const auto k = p.devices[0].thunks[i].kind;
    if (k == sched::ThunkKind::kKernel || k == sched::ThunkKind::kGemm) out.push_back(static_cast<uint32_t>(i));
  }
  return out;
}

TEST_F(CommandBuffer, AChainAsOneGraphGivesTheCpuResults) {
  Chain c = lower_chain();
  const std::vector<uint32_t> work = work_thunks(c.lowered);
  ASSERT_GE(work.size(), 4u);
  sched::CommandBuffer g;
  for (size_t k = 0; k < work.size(); ++k) {
    g.thunks.push_back(work[k]);
    g.deps.push_back(k == 0 ? std::vector<int>{} : std::vector<int>{static_cast<int>(k) - 1});
  }
  RunOptions options = gpu_test::random_init(3);
  options.collect_results = true;
  options.iterations = 4;  // no warm-up asked: a traced run adds those that teach the collector
  auto cpu = run_cpu(c.module, 0, 0, options);
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  options.command_buffers = {{g}};
  auto on = run_cuda(c.lowered, options);
  ASSERT_TRUE(on.is_ok()) << on.status().message();
  gpu_test::Both both{ok_status(), std::move(*cpu), std::move(*on)};
  gpu_test::expect_same(both, 1e-6);
  const trace::Trace& t = both.cuda.trace;
  EXPECT_EQ(counter(t, "command_buffer_graphs"), 1);
  EXPECT_EQ(counter(t, "command_buffer_fallbacks"), 0);
  std::map<int, int> per_iteration;
  for (const trace::Event& e : t.events) {
    ASSERT_FALSE(t.instruction_of(e).empty());
    ++per_iteration[e.iteration];
  }
  ASSERT_EQ(per_iteration.size(), 4u);  // the teaching warm-ups are dropped
  for (const auto& [it, n] : per_iteration) EXPECT_EQ(n, per_iteration[0]) << "iteration " << it;
  // The graph's DAG, a chain here, as the trace's dependencies.
  EXPECT_GE(t.dependencies.size(), 4 * (work.size() - 1));
}

// A graph launched at its first node would run ahead of a thunk of its
// stream that is no node: it must run as stream launches, and say so.
TEST_F(CommandBuffer, AGraphAroundAnotherThunkFallsBackAndSaysSo) {
  Chain c = lower_chain();
  const std::vector<uint32_t> work = work_thunks(c.lowered);
  ASSERT_GE(work.size(), 3u);
  sched::CommandBuffer g{.thunks = {work[0], work[2]}, .deps = {{}, {0}}};
  RunOptions options = gpu_test::random_init(4);
  options.collect_results = true;
  auto cpu = run_cpu(c.module, 0, 0, options);
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  options.command_buffers = {{g}};
  auto on = run_cuda(c.lowered, options);
  ASSERT_TRUE(on.is_ok()) << on.status().message();
  ASSERT_EQ(on->notes.size(), 1u);
  EXPECT_NE(on->notes[0].find("runs as stream launches"), std::string::npos) << on->notes[0];
  EXPECT_EQ(counter(on->trace, "command_buffer_fallbacks"), 1);
  EXPECT_EQ(counter(on->trace, "command_buffer_graphs"), 0);
  gpu_test::Both both{ok_status(), std::move(*cpu), std::move(*on)};
  gpu_test::expect_same(both, 1e-6);
}

TEST_F(CommandBuffer, AGraphNamingAThunkPastTheProgramFallsBack) {
  Chain c = lower_chain();
  sched::CommandBuffer g{.thunks = {work_thunks(c.lowered)[0], 100000}, .deps = {{}, {0}}};
  RunOptions options;
  options.command_buffers = {{g}};
  auto on = run_cuda(c.lowered, options);
  ASSERT_TRUE(on.is_ok()) << on.status().message();
  EXPECT_EQ(counter(on->trace, "command_buffer_fallbacks"), 1);
  ASSERT_EQ(on->notes.size(), 1u);
  EXPECT_NE(on->notes[0].find("past the program"), std::string::npos) << on->notes[0];
}

}  // namespace
}  // namespace sl::exec
