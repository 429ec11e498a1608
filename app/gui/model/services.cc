#include "app/gui/model/services.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/exec/cpu/cpu_backend.h"
#include "core/hlo/parser.h"
#include "core/sched/lowering.h"
#include "sim/sim_backend.h"
#ifdef SL_HAVE_CUDA
#include "core/exec/cuda/cuda_backend.h"
#endif

namespace sl::gui {

const char* phase_name(int phase) {
  switch (phase) {
    case JobProgress::kQueued: return "queued";
    case JobProgress::kParsing: return "parsing";
    case JobProgress::kLowering: return "lowering";
    case JobProgress::kRunning: return "running";
    case JobProgress::kSaving: return "saving";
    case JobProgress::kDone: return "done";
    case JobProgress::kReading: return "reading";
    case JobProgress::kIndexing: return "indexing";
  }
  return "?";
}

namespace {

constexpr size_t kBatchEvents = 65536;

Result<std::unique_ptr<exec::Backend>> make_backend(const std::string& name, const std::string& device_model) {
  if (name == "sim") {
    SL_ASSIGN_OR_RETURN(sim::DeviceModel model, sim::load_device_model(device_model));
    return sim::make_sim_backend(model);
  }
  if (name == "cpu") return exec::make_cpu_backend();
  if (name == "cuda") {
#ifdef SL_HAVE_CUDA
    exec::CudaOptions options;
    return exec::make_cuda_backend(options);
#else
    return runtime_error("this streamlens-gui was built without CUDA");
#endif
  }
  return usage_error("unknown backend '" + name + "' (sim, cpu, cuda)");
}

std::string unavailable(const std::string& backend) {
  if (backend == "sim" || backend == "cpu") return "";
  if (backend == "cuda") {
#ifdef SL_HAVE_CUDA
    // Cached: asking the driver every frame would be slow.
    static const std::string reason = [] {
      Result<std::unique_ptr<exec::Backend>> probe = exec::make_cuda_backend(exec::CudaOptions{});
      return probe ? std::string() : probe.status().message();
    }();
    return reason;
#else
    return "built without CUDA (configure with -DSTREAMLENS_CUDA=ON on a machine with a GPU)";
#endif
  }
  return "unknown backend";
}

std::string fmt_name(const RerunRequest& request) {
  std::string name = request.program_name.empty() ? "rerun" : request.program_name;
  return name + " on " + request.backend + " (rerun of #" + std::to_string(request.source_run) + ")";
}

std::string config_json(const RerunRequest& request, const sched::LoweredProgram& lowered) {
  nlohmann::json config = {
      {"backend", request.backend},
      {"rerun_of", request.source_run},
      {"replicas", lowered.replica_count},
      {"partitions", lowered.num_partitions},
      {"stream_overrides", request.overrides},
      {"source", "streamlens-gui"},
  };
  return config.dump();
}

Result<int64_t> run_pipeline(const RerunRequest& request, JobProgress& progress) {
  progress.phase = JobProgress::kParsing;
  SL_ASSIGN_OR_RETURN(hlo::Module module, hlo::parse_program(request.program_text, request.program_name + ".hlo"));
  progress.phase = JobProgress::kLowering;
  sched::LowerOptions options;
  options.overrides = request.overrides;
  options.replica_count = request.replicas;
  options.num_partitions = request.partitions;
  SL_ASSIGN_OR_RETURN(sched::LoweredProgram lowered, sched::lower(module, options));
  SL_ASSIGN_OR_RETURN(std::unique_ptr<exec::Backend> backend, make_backend(request.backend, request.device_model));

  // Open (and so validate) the database before the possibly long run.
  SL_ASSIGN_OR_RETURN(std::unique_ptr<trace::TraceStore> store,
                      trace::TraceStore::open(request.db_path, trace::TraceStore::Mode::kOpenExisting));
  trace::RunInfo info;
  info.name = fmt_name(request);
  info.program_name = module.name;
  info.backend = request.backend;
  info.device_model = request.backend == "sim" ? request.device_model : request.backend == "cpu" ? "host" : "gpu";
  info.num_devices = static_cast<int64_t>(lowered.devices.size());
  info.config_json = config_json(request, lowered);
  SL_ASSIGN_OR_RETURN(int64_t run_id, store->begin_run(info, request.program_text, lowered.streams));

  progress.phase = JobProgress::kRunning;
  exec::RunOptions run_options;
  run_options.device_model = request.device_model;
  run_options.progress = [&progress](int64_t done, int64_t total) {
    progress.done = done;
    progress.total = total;
  };
  Result<exec::RunOutput> output = backend->run(lowered, run_options);
  if (!output) {
    (void)store->finish_run(run_id, trace::RunStatus::kFailed, 0, {{"backend_error", 1, output.status().message()}});
    return output.status();
  }
  progress.phase = JobProgress::kSaving;
  trace::Trace& trace = output->trace;
  progress.done = 0;
  progress.total = static_cast<int64_t>(trace.events.size());
  for (size_t first = 0; first < trace.events.size(); first += kBatchEvents) {
    size_t count = std::min(kBatchEvents, trace.events.size() - first);
    Status appended = store->append(run_id, trace, first, count);
    if (!appended.is_ok()) {
      (void)store->finish_run(run_id, trace::RunStatus::kFailed, 0, trace.counters);
      return appended;
    }
    progress.done = static_cast<int64_t>(first + count);
  }
  SL_RETURN_IF_ERROR(store->append_dependencies(run_id, trace.dependencies));
  SL_RETURN_IF_ERROR(store->finish_run(run_id, trace::RunStatus::kComplete, trace.makespan_ns(), trace.counters));
  progress.phase = JobProgress::kDone;
  return run_id;
}

}  // namespace

Services default_services() {
  Services services;
  services.open_store = [](const std::string& path) -> Result<std::unique_ptr<trace::TraceStore>> {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return not_found("no such database: " + path);
    return trace::TraceStore::open(path, trace::TraceStore::Mode::kOpenExisting);
  };
  services.unavailable_reason = unavailable;
  services.rerun = run_pipeline;
  return services;
}

}  // namespace sl::gui
