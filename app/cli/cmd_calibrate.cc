// `streamlens calibrate RUN [RUN...] -o DEVICE.json`: fits a device model to
// measured runs (sim/calibrate.h) and writes it as a device file.

#include <cstdio>
#include <memory>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/exit_codes.h"
#include "app/cli/output_guard.h"
#include "app/common/run_ref.h"
#include "core/hlo/parser.h"
#include "core/hlo/verifier.h"
#include "core/trace/store/trace_store.h"
#include "sim/calibrate.h"
#include "sim/device_model_json.h"

namespace sl::cli {
namespace {

// A run loaded with everything calibration needs; the module must outlive
// the lowered program that points into it.
struct LoadedRun {
  trace::RunInfo info;
  trace::Trace trace;
  std::unique_ptr<hlo::Module> module;
  sched::LoweredProgram program;
  bool allow_tf32 = false;
  int comm_sms = 0;
};

bool is_measured(const std::string& backend) {
  return backend == "cuda" || backend == "capture" || backend == "nsys";
}

Result<LoadedRun> load_run(trace::TraceStore& store, const std::string& ref) {
  SL_ASSIGN_OR_RETURN(int64_t id, app::resolve_run(store, ref));
  LoadedRun run;
  SL_ASSIGN_OR_RETURN(run.info, store.run_info(id));
  if (!is_measured(run.info.backend)) {
    return invalid_input(fmt::format("run {} was made by the {} backend, not measured on a GPU; calibrate needs "
                                     "runs of backend cuda, capture or nsys (a simulated run would only give back "
                                     "the model that produced it)", id, run.info.backend));
  }
  if (run.info.status == trace::RunStatus::kFailed) {
    return invalid_input(fmt::format("run {} failed; calibrate needs a complete measured run", id));
  }
  SL_ASSIGN_OR_RETURN(run.trace, store.load_trace(id));
  SL_ASSIGN_OR_RETURN(std::string text, store.program_text(id));
  if (text.empty()) {
    return invalid_input(fmt::format("run {} has no program stored, so its kernels have no GEMM shapes or "
                                     "collective groups to fit", id));
  }
  const std::string file_name = fmt::format("run {} program", id);
  SL_ASSIGN_OR_RETURN(hlo::Module module, hlo::parse_program(text, file_name));

  sched::LowerOptions options;
  SL_ASSIGN_OR_RETURN(std::vector<sched::StreamAssignmentEntry> streams, store.stream_assignment(id));
  for (const sched::StreamAssignmentEntry& e : streams) {
    if (e.overridden) options.overrides[e.instruction] = e.stream;
  }
  nlohmann::json config = nlohmann::json::parse(run.info.config_json, nullptr, /*allow_exceptions=*/false);
  if (config.is_object()) {
    if (config.contains("replicas") && config["replicas"].is_number_integer()) {
      options.replica_count = config["replicas"].get<int64_t>();
    }
    if (config.contains("partitions") && config["partitions"].is_number_integer()) {
      options.num_partitions = config["partitions"].get<int64_t>();
    }
    if (config.contains("allow_tf32") && config["allow_tf32"].is_boolean()) {
      run.allow_tf32 = config["allow_tf32"].get<bool>();
    }
    if (config.contains("comm_sms") && config["comm_sms"].is_number_integer()) {
      run.comm_sms = config["comm_sms"].get<int>();
    }
  }
  // The run's device counts apply before verification, as they did when it ran.
  hlo::settle_device_counts(module, options.replica_count, options.num_partitions);
  SL_RETURN_IF_ERROR(hlo::verify_status(module));
  run.module = std::make_unique<hlo::Module>(std::move(module));
  SL_ASSIGN_OR_RETURN(run.program, sched::lower(*run.module, options));
  return run;
}

}  // namespace

int cmd_calibrate(const StoreArgs& args, const std::vector<std::string>& runs, const std::string& out) {
  Status safe = refuse_overwrite(out, args.db, {});
  if (!safe.is_ok()) return fail(safe);
  auto store = trace::TraceStore::open(args.db, trace::TraceStore::Mode::kReadOnly);
  if (!store) return fail(store.status());
  std::vector<LoadedRun> loaded;
  for (const std::string& ref : runs) {
    Result<LoadedRun> run = load_run(**store, ref);
    if (!run) return fail(run.status());
    loaded.push_back(std::move(*run));
  }
  // The stock device file of the GPU the runs ran on; h200 for any other.
  std::string base_name = sim::stock_device_for_gpu(loaded.front().info.device_model);
  if (base_name.empty()) base_name = "h200";
  Result<sim::DeviceModel> base = sim::load_device_model(base_name);
  if (!base) return fail(base.status());

  std::vector<sim::CalibrationRun> inputs;
  std::string ids;
  for (const LoadedRun& r : loaded) {
    inputs.push_back({r.info.id, &r.trace, &r.program, r.allow_tf32, r.comm_sms});
    ids += (ids.empty() ? "" : ",") + std::to_string(r.info.id);
  }
  Result<sim::Calibration> fitted = sim::calibrate_detailed(*base, inputs);
  if (!fitted) return fail(fitted.status());
  sim::DeviceModel model = fitted->model;
  model.description = fmt::format("{} (calibrated from runs {})", base->description, ids);
  Status written = sim::write_device_model(model, fitted->sources, out);
  if (!written) return fail(written);

  std::printf("base model: %s (%s)\n", base->name.c_str(), base->file.c_str());
  for (const sim::FittedNumber& f : fitted->fitted) {
    std::printf("  %-42s %8.5g -> %-12.5g (%lld samples)\n", f.key.c_str(), f.before, f.after,
                static_cast<long long>(f.samples));
  }
  for (const std::string& note : fitted->notes) std::printf("  note: %s\n", note.c_str());
  std::printf("wrote %s (use it with --device %s)\n", out.c_str(), out.c_str());
  return kExitOk;
}

}  // namespace sl::cli
