// apply()'s reruns: starting one on a worker, and opening its run when it is done.

#include <chrono>
#include <future>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/common/kernel_times.h"
#include "app/gui/model/app_state.h"
#include "app/gui/model/apply_internal.h"

namespace sl::gui {
namespace apply_detail {

int64_t config_int(const std::string& config_json, const char* key) {
  auto config = nlohmann::json::parse(config_json, nullptr, false);
  if (config.is_discarded() || !config.is_object() || !config.contains(key) || !config[key].is_number_integer()) return 0;
  return config[key].get<int64_t>();
}

// The simulator's device model for reruns and suggestions: the run's own when
// it was simulated (a trace-driven run's in its config, its device_model
// being a description).
std::string sim_device_of(const trace::RunInfo& source) {
  if (const app::KernelTimesSource times = app::kernel_times_source(source); times.run > 0) return times.device;
  return source.backend == "sim" && !source.device_model.empty() ? source.device_model : "h200";
}

// Why the current run cannot be rerun now; empty when it can.
std::string rerun_blocker(const AppState& s) {
  if (s.job.active) return "a rerun is already in progress";
  if (s.load.active) return fmt::format("wait for run {} to finish loading", s.load.run_id);
  if (!s.current) return "open a run first";
  if (s.current->program_text.empty()) return "this run has no program text (imported or captured): nothing to rerun";
  return "";
}

void start_rerun(AppState& s, const std::string& backend, sched::StreamOverrides overrides, int comm_sms,
                 const std::string& device_model) {
  std::string why = s.services.unavailable_reason ? s.services.unavailable_reason(backend) : "";
  if (!why.empty()) return fail(s, backend + " is not available: " + why);
  if (!s.services.rerun) return fail(s, "reruns are not available");

  RerunRequest request;
  request.db_path = s.db_path;
  request.source_run = s.current->info.id;
  request.backend = backend;
  const auto& source = s.current->info;
  request.device_model = device_model;
  request.program_text = s.current->program_text;
  request.program_name = source.program_name;
  request.overrides = std::move(overrides);
  request.comm_sms = comm_sms;
  request.replicas = config_int(source.config_json, "replicas");
  request.partitions = config_int(source.config_json, "partitions");
  // A linked capture of an XLA program, or a simulation costed by one: the
  // simulator reruns it with the capture's kernel times (the what-if for the
  // real program), not with the device model's guesses.
  if (backend == "sim") {
    app::KernelTimesSource times = app::kernel_times_source(source);
    request.kernel_times_run = times.run;
    request.module_path = times.module_path;
  }

  s.job = RerunJob{};
  s.job.active = true;
  s.job.backend = backend;
  s.job.source_run = request.source_run;
  s.job.progress = std::make_shared<JobProgress>();
  s.job.started = std::chrono::steady_clock::now();
  // The job owns copies of everything it needs; the progress block is shared.
  s.job.result = std::async(std::launch::async, [fn = s.services.rerun, request, progress = s.job.progress] {
    return fn(request, *progress);
  });
  info(s, fmt::format("rerunning run {} on {}...", request.source_run, backend));
}

void rerun(AppState& s, const Rerun& a) {
  if (std::string why = rerun_blocker(s); !why.empty()) return fail(s, why);
  if (a.backend == "cpu" && !s.current->outline.cpu_refusal.empty()) {
    return fail(s, "cpu rerun refused: " + s.current->outline.cpu_refusal);
  }
  start_rerun(s, a.backend, rerun_overrides(s), exec::kDefaultCommSms, sim_device_of(s.current->info));
  // The edit -> rerun -> compare loop: the new run opens compared with its source.
  if (s.job.active) s.compare_after_load = s.current->info.id;
}

void finish_rerun(AppState& s) {
  if (!s.job.active) return;
  if (s.job.result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  Result<int64_t> result = s.job.result.get();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.job.started).count();
  std::string backend = s.job.backend;
  s.job = RerunJob{};
  if (!result) return fail(s, "rerun on " + backend + " failed: " + result.status().message());
  refresh_runs(s);
  if (s.load.active) return info(s, fmt::format("rerun on {} saved as run {} ({:.1f} s)", backend, *result, seconds));
  start_load(s, *result, false);
  info(s, fmt::format("rerun on {} saved as run {} ({:.1f} s); loading it...", backend, *result, seconds));
}

}  // namespace apply_detail

std::string rerun_refusal(const AppState& state, const std::string& backend) {
  std::string why = state.services.unavailable_reason ? state.services.unavailable_reason(backend) : "";
  if (!why.empty()) return why;
  if (state.current && state.current->program_text.empty()) return "this run has no program to rerun";
  if (state.job.active) return "a rerun is in progress";
  if (state.load.active) return "a run is loading";
  if (backend == "cpu" && state.current && !state.current->outline.cpu_refusal.empty()) {
    return state.current->outline.cpu_refusal;
  }
  return "";
}

int64_t rerun_source(const trace::RunInfo& run) { return apply_detail::config_int(run.config_json, "rerun_of"); }

sched::StreamOverrides rerun_overrides(const AppState& state) {
  sched::StreamOverrides overrides;
  if (state.current) {
    for (const auto& e : state.current->streams) {
      if (e.overridden) overrides[e.instruction] = e.stream;
    }
  }
  for (const auto& [name, stream] : state.edits) overrides[name] = stream;
  return overrides;
}

}  // namespace sl::gui
