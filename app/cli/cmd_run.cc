// `streamlens run`: parse, verify, lower, execute on a backend, record.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "app/common/command_buffer_setup.h"
#include "app/cli/capture_losses.h"
#include "app/cli/commands.h"
#include "app/cli/exit_codes.h"
#include "app/common/kernel_times.h"
#include "app/cli/program_loader.h"
#include "app/cli/output_guard.h"
#include "app/cli/progress.h"
#include "app/cli/run_summary.h"
#include "app/cli/store_access.h"
#include "app/cli/terminal.h"
#include "app/common/backend_factory.h"
#include "app/common/interrupt_guard.h"
#include "app/common/run_recorder.h"
#include "core/dist/dist_env.h"
#include "core/exec/results_json.h"
#include "core/trace/report.h"
#include "sim/device_model.h"
#include "sim/engine.h"
#include "sim/sim_backend.h"

namespace sl::cli {
namespace {

// `kernel_times_run`: the linked capture a trace-driven simulation is costed
// by (0: none), kept with the device file so a rerun (streamlens-gui) is too.
std::string config_json(const RunArgs& args, const sched::LowerOptions& options, const std::string& backend,
                        int64_t kernel_times_run) {
  nlohmann::json config = {
      {"program", args.program.program},
      {"backend", backend},
      {"init", args.init},
      {"seed", args.seed},
      {"warmup", args.warmup},
      {"iterations", args.iterations},
      {"replicas", options.replica_count},
      {"partitions", options.num_partitions},
      {"allow_tf32", args.allow_tf32},
      {"comm_sms", args.comm_sms},
      {"command_buffers", args.command_buffers},
      {"stream_overrides", options.overrides},
      // Who records the run: a reader shows it `interrupted` once this process is gone.
      {"pid", static_cast<int64_t>(getpid())},
      {"host", app::process_host_name()},
  };
  if (kernel_times_run > 0) {
    std::error_code ec;
    const std::filesystem::path module_path = std::filesystem::absolute(args.program.program, ec);
    config["kernel_times"] = kernel_times_run;
    config["module_path"] = ec ? args.program.program : module_path.string();
    config["device"] = args.device;
  }
  // One process per GPU: every rank's times count from rank 0's start
  // (CudaOptions::dist), so `streamlens merge` lines the ranks' runs up as they are.
  if (backend == "cuda") {
    if (auto dist = dist::dist_env_from_environment(); dist.is_ok() && dist->has_value()) {
      config["rank"] = (*dist)->rank;
      config["world_size"] = (*dist)->world_size;
      config["time_origin_ns"] = 0;
    }
  }
  return config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return runtime_error("cannot write " + path);
  out << text;
  if (!out.flush()) return runtime_error("cannot write " + path);
  return ok_status();
}

// The step at the fastest and slowest host pace measured between calls, when
// the simulator recorded them (a what-if onto another compilation, or host
// costs from the device file) and they differ from the step by 0.5% or
// more; "" otherwise.
std::string host_pace_note(const trace::Trace& trace, int iterations) {
  int64_t fast = -1, slow = -1;
  for (const trace::Counter& c : trace.counters) {
    if (c.name == sim::kHostPaceFastCounter) fast = c.value;
    if (c.name == sim::kHostPaceSlowCounter) slow = c.value;
  }
  const double step = static_cast<double>(trace.makespan_ns()) / std::max(1, iterations);
  if (fast < 0 || slow < 0 || step <= 0) return "";
  auto near_step = [&](int64_t ns) { return std::abs(static_cast<double>(ns) - step) < 0.005 * step; };
  if (near_step(fast) && near_step(slow)) return "";
  return fmt::format("XLA's host takes another pace in each call: this step is {:.1f} us as simulated, {:.1f} to "
                     "{:.1f} us at the fastest and slowest calls measured (the device file's host costs scaled, and "
                     "the capture's own call; "
                     "counters {}, {})",
                     step / 1e3, static_cast<double>(fast) / 1e3, static_cast<double>(slow) / 1e3,
                     sim::kHostPaceFastCounter, sim::kHostPaceSlowCounter);
}

}  // namespace

int cmd_run(const RunArgs& given) {
  RunArgs args = given;
  Result<std::string> device = simulated_device(args.device, args.db, args.kernel_times);
  if (!device) return fail(device.status());
  args.device = *device;
  Result<hlo::Module> module = load_program(args.program.program, args.program.replicas, args.program.partitions);
  if (!module) return fail(module.status());
  Result<sched::LowerOptions> options =
      lower_options(args.program.streams, args.program.replicas, args.program.partitions,
                    args.program.max_unroll);
  if (!options) return fail(options.status());
  if (!args.kernel_times.empty()) {
    // Loops without a known trip count run as often as in the measured run
    // (errors about the run itself come with the kernel times below).
    if (auto trips = app::measured_loop_trips(args.db, args.kernel_times, *module)) options->trip_counts = std::move(*trips);
  }
  Result<sched::LoweredProgram> lowered = sched::lower(*module, *options);
  if (!lowered) return fail(lowered.status());
  for (const std::string& warning : lowered->warnings) std::fprintf(stderr, "warning: %s\n", warning.c_str());
  options->replica_count = lowered->replica_count;
  options->num_partitions = lowered->num_partitions;

  // Before any backend starts a thread: SIGINT/SIGTERM then mark the run.
  app::InterruptGuard interrupt_guard(args.db);
  if (!args.results.empty()) {
    Status safe = refuse_overwrite(args.results, args.db, {args.program.program, args.device});
    if (!safe.is_ok()) return fail(safe);
  }

  if (args.backend != "cuda" && args.backend != "auto" && (args.warmup > 0 || args.iterations > 1)) {
    std::fprintf(stderr, "note: --warmup/--iterations only apply to the cuda backend\n");
  }
  Result<app::BackendChoice> choice = app::make_backend(args.backend, args.device, args.allow_tf32);
  if (!choice) return fail(choice.status());
  if (!choice->note.empty()) std::fprintf(stderr, "%s\n", choice->note.c_str());
  if (args.command_buffers != "auto" && choice->name != "sim" && choice->name != "cuda") {
    return fail(usage_error("--command-buffers goes with --backend sim or cuda"));
  }
  sim::LaunchSetup launch;
  // cuda: the command buffers the dump shows, each run as one CUDA graph.
  std::vector<std::vector<sched::CommandBuffer>> cuda_graphs;
  if (choice->name == "sim") {
    Result<app::CommandBufferInfo> cb =
        app::command_buffer_setup(args.program.program, *module, *lowered, args.command_buffers, options->trip_counts);
    if (!cb) return fail(cb.status());
    if (const std::string line = app::command_buffer_line(*cb); !line.empty()) std::fprintf(stderr, "%s\n", line.c_str());
    for (const std::string& node : app::overridden_graph_nodes(*cb, *lowered, options->overrides)) {
      std::fprintf(stderr,
                   "note: %s runs as a node of a command buffer (CUDA graph), where XLA orders work by the graph's "
                   "edges, not by streams: its --stream changes nothing (--command-buffers off launches it alone)\n",
                   node.c_str());
    }
    launch = std::move(cb->setup);
  } else if (choice->name == "cuda") {
    Result<app::CommandBufferInfo> cb = app::command_buffer_setup(args.program.program, *module, *lowered, args.command_buffers);
    if (!cb) return fail(cb.status());
    if (cb->setup.command_buffers && !cb->setup.graphs.empty() && cb->graph_nodes > 0) {
      std::fprintf(stderr, "%s: run as CUDA graphs\n", app::command_buffer_line(*cb).c_str());
      cuda_graphs = std::move(cb->setup.graphs);
    }
  }
  int64_t kernel_times_run = 0;
  if (!args.kernel_times.empty()) {
    if (choice->name != "sim") return fail(usage_error("--kernel-times goes with --backend sim"));
    auto driven =
        app::trace_driven_backend(args.db, args.kernel_times, args.device, std::move(launch), args.host_costs == "capture",
                             &*module, args.program.program);
    if (!driven) return fail(driven.status());
    if (!driven->host_costs.empty()) std::fprintf(stderr, "%s\n", driven->host_costs.c_str());
    if (!driven->matching.empty()) std::fprintf(stderr, "%s\n", driven->matching.c_str());
    choice->backend = std::move(driven->backend);
    choice->device_model = driven->description;
    kernel_times_run = driven->run_id;
  } else if (launch.xla_executable) {
    auto model = sim::load_device_model(args.device);
    if (!model) return fail(model.status());
    choice->backend = sim::make_sim_backend(std::move(*model), std::move(launch));
  }

  // Open the database before running, so a bad file fails fast and untouched.
  Result<std::unique_ptr<trace::TraceStore>> store = open_store_for_writing(args.db);
  if (!store) return fail(store.status());

  trace::RunInfo info;
  info.name = args.name.empty() ? module->name + " on " + choice->name : args.name;
  info.program_name = module->name;
  info.backend = choice->name;
  info.device_model = choice->device_model;
  info.num_devices = static_cast<int64_t>(lowered->devices.size());
  info.config_json = config_json(args, *options, choice->name, kernel_times_run);

  exec::RunOptions run_options;
  run_options.init = args.init == "random" ? exec::InitMode::kRandom : exec::InitMode::kRamp;
  run_options.seed = args.seed;
  run_options.warmup = args.warmup;
  run_options.iterations = args.iterations;
  run_options.device_model = args.device;
  run_options.allow_tf32 = args.allow_tf32;
  run_options.comm_sms = args.comm_sms;
  run_options.nccl_timeout_s = args.nccl_timeout_s;
  run_options.collect_results = !args.results.empty();
  run_options.command_buffers = std::move(cuda_graphs);
  ProgressBar progress("running on " + choice->name);
  run_options.progress = [&progress](int64_t done, int64_t total) { progress.update(done, total); };

  Result<app::RecordedRun> recorded =
      app::record_run(**store, info, module->source_text, lowered->streams, *choice->backend, *lowered, run_options,
                      nullptr, [&](int64_t run_id) { interrupt_guard.set_run(run_id); });
  interrupt_guard.set_run(0);
  if (!recorded) return fail(recorded.status());
  for (const std::string& note : recorded->output.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  warn_capture_losses(recorded->output.trace, "run " + std::to_string(recorded->run_id));
  for (const trace::Counter& c : recorded->output.trace.counters) {
    if (c.name == sim::kCollectivesHeldCounter && c.value > 0) {
      std::fprintf(stderr,
                   "note: %lld collective(s) launched after a GEMM that holds every SM waited for it to end "
                   "(counters %s, %s)\n",
                   static_cast<long long>(c.value), sim::kCollectivesHeldCounter, sim::kHeldNsCounter);
    }
  }

  if (const std::string range = host_pace_note(recorded->output.trace, args.iterations); !range.empty()) {
    std::fprintf(stderr, "note: %s\n", range.c_str());
  }

  if (!args.results.empty()) {
    Status written = write_text_file(args.results, exec::results_to_json(recorded->output.results));
    if (!written.is_ok()) return fail(written);
  }
  Result<trace::RunInfo> stored = (*store)->run_info(recorded->run_id);
  if (!stored) return fail(stored.status());
  if (args.json) {
    std::printf("%s\n", trace::run_json(*stored, recorded->output.trace).c_str());
  } else {
    print_text(stdout, run_summary_text(*stored, recorded->output.trace));
  }
  return kExitOk;
}

}  // namespace sl::cli
