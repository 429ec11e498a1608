#include "app/gui/model/services.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "app/common/backend_factory.h"
#include "app/common/command_buffer_setup.h"
#include "app/common/kernel_times.h"
#include "app/common/run_recorder.h"
#include "app/gui/model/program_outline.h"
#include "core/hlo/parser.h"
#include "core/sched/lowering.h"
#include "app/common/cuda_plugin.h"

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

std::string unavailable(const std::string& backend) {
  if (backend == "sim" || backend == "cpu") return "";
  if (backend == "cuda") {
#ifdef SL_HAVE_CUDA
    // Cached: asking the driver every frame would be slow.
    static const std::string reason = [] {
      Result<const app::CudaPlugin*> cuda = app::cuda_plugin();
      if (!cuda) return cuda.status().message();
      Result<std::unique_ptr<exec::Backend>> probe = (*cuda)->make_backend(exec::CudaOptions{});
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
      {"comm_sms", request.comm_sms},
      {"source", "streamlens-gui"},
  };
  if (request.backend == "sim" && request.kernel_times_run > 0) {
    // As `streamlens run --kernel-times` records it: a rerun of this run is costed alike.
    config["kernel_times"] = request.kernel_times_run;
    config["module_path"] = request.module_path;
    config["device"] = request.device_model;
  }
  return config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Stops a cancelled rerun at the edges of the backend's run: before it
// starts, and before anything is saved (the cpu backend cannot stop inside
// an operation, so a cancel during one takes effect when it returns).
class CancellableBackend : public exec::Backend {
 public:
  CancellableBackend(exec::Backend& inner, const JobProgress& progress) : inner_(inner), progress_(progress) {}
  std::string name() const override { return inner_.name(); }
  Result<exec::RunOutput> run(const sched::LoweredProgram& program, const exec::RunOptions& options) override {
    if (progress_.cancel) return runtime_error("rerun cancelled before it started");
    Result<exec::RunOutput> out = inner_.run(program, options);
    if (progress_.cancel) return runtime_error("rerun cancelled in streamlens-gui");
    return out;
  }

 private:
  exec::Backend& inner_;
  const JobProgress& progress_;
};

Result<int64_t> run_pipeline(const RerunRequest& request, JobProgress& progress) {
  progress.phase = JobProgress::kParsing;
  SL_ASSIGN_OR_RETURN(hlo::Module module, hlo::parse_program(request.program_text, request.program_name + ".hlo"));
  progress.phase = JobProgress::kLowering;
  sched::LowerOptions options;
  options.overrides = request.overrides;
  options.replica_count = request.replicas;
  options.num_partitions = request.partitions;
  const bool trace_driven = request.backend == "sim" && request.kernel_times_run > 0;
  const std::string kernel_times = std::to_string(request.kernel_times_run);
  if (trace_driven) {
    // Loops without a known trip count run as often as in the capture.
    if (auto trips = app::measured_loop_trips(request.db_path, kernel_times, module)) {
      options.trip_counts = std::move(*trips);
    }
  }
  SL_ASSIGN_OR_RETURN(sched::LoweredProgram lowered, sched::lower(module, options));
  // Refused up front rather than after minutes of work and an empty failed run.
  if (request.backend == "cpu") {
    if (std::string why = cpu_refusal(module); !why.empty()) return invalid_input("cpu rerun refused: " + why);
  }
  SL_ASSIGN_OR_RETURN(app::BackendChoice choice, app::make_backend(request.backend, request.device_model, false));
  if (trace_driven) {
    // As `streamlens run MODULE --backend sim --kernel-times RUN`: launched as
    // the thunk dump beside the module says (as any HLO program when it is gone).
    SL_ASSIGN_OR_RETURN(app::CommandBufferInfo launch, app::command_buffer_setup(request.module_path, module, lowered,
                                                                                 "auto", options.trip_counts));
    SL_ASSIGN_OR_RETURN(app::TraceDrivenBackend driven,
                        app::trace_driven_backend(request.db_path, kernel_times, request.device_model,
                                                  std::move(launch.setup), true, &module, request.module_path));
    choice.backend = std::move(driven.backend);
    choice.device_model = driven.description;
  }
  if (progress.cancel) return runtime_error("rerun cancelled before it started");

  // Open (and so validate) the database before the possibly long run.
  SL_ASSIGN_OR_RETURN(std::unique_ptr<trace::TraceStore> store,
                      trace::TraceStore::open(request.db_path, trace::TraceStore::Mode::kOpenExisting));
  trace::RunInfo info;
  info.name = fmt_name(request);
  info.program_name = module.name;
  info.backend = choice.name;
  info.device_model = choice.device_model;
  info.num_devices = static_cast<int64_t>(lowered.devices.size());
  info.config_json = config_json(request, lowered);

  progress.phase = JobProgress::kRunning;
  exec::RunOptions run_options;
  run_options.device_model = request.device_model;
  run_options.comm_sms = request.comm_sms;
  run_options.progress = [&progress](int64_t done, int64_t total) {
    progress.done = done;
    progress.total = total;
  };
  auto saving = [&progress](int64_t saved, int64_t total) {
    progress.phase = JobProgress::kSaving;
    progress.done = saved;
    progress.total = total;
  };
  CancellableBackend backend(*choice.backend, progress);
  SL_ASSIGN_OR_RETURN(app::RecordedRun recorded,
                      app::record_run(*store, info, request.program_text, lowered.streams, backend, lowered,
                                      run_options, saving, [&progress](int64_t id) { progress.run_id = id; }));
  progress.phase = JobProgress::kDone;
  return recorded.run_id;
}

}  // namespace

Services default_services() {
  Services services;
  services.open_store = [](const std::string& path) -> Result<std::unique_ptr<trace::TraceStore>> {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return not_found("no such database: " + path);
    // SQLite would take an empty file as an empty database and write a
    // schema into it: refuse, so only a new database is ever created.
    if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0 && !ec) {
      return invalid_input(path + " is an empty file, not a streamlens database");
    }
    return trace::TraceStore::open(path, trace::TraceStore::Mode::kOpenExisting);
  };
  services.unavailable_reason = unavailable;
  services.rerun = run_pipeline;
  services.suggest = run_suggest;
  return services;
}

}  // namespace sl::gui
