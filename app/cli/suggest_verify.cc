#include "app/cli/suggest_verify.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "app/cli/progress.h"
#include "app/common/run_recorder.h"
#include "core/sched/lowering.h"
#include "core/trace/iterations.h"

namespace sl::cli {
namespace {

std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string config_json(const SuggestArgs& args, const std::string& backend, const Variant& variant, int repeat,
                        int64_t replicas, int64_t partitions) {
  nlohmann::json config = {
      {"program", args.program},
      {"backend", backend},
      {"init", "ramp"},
      {"seed", 0},
      {"warmup", args.warmup},
      {"iterations", args.iterations},
      {"replicas", replicas},
      {"partitions", partitions},
      {"allow_tf32", args.allow_tf32},
      {"comm_sms", variant.comm_sms},
      {"stream_overrides", variant.overrides},
      {"suggest", {{"variant", variant.label}, {"repeat", repeat}, {"predicted_makespan_ns", variant.predicted_ns}}},
  };
  return config.dump();
}

}  // namespace

int64_t Measurement::median_ns() const {
  if (makespans_ns.empty()) return 0;
  return sorted(makespans_ns)[makespans_ns.size() / 2];
}
int64_t Measurement::min_ns() const { return makespans_ns.empty() ? 0 : sorted(makespans_ns).front(); }
int64_t Measurement::max_ns() const { return makespans_ns.empty() ? 0 : sorted(makespans_ns).back(); }

Result<std::vector<Measurement>> verify_variants(exec::Backend& backend, const std::string& backend_name,
                                                 const std::string& device_name, trace::TraceStore& store,
                                                 const hlo::Module& module, const SuggestArgs& args,
                                                 const std::vector<Variant>& variants) {
  // Lower everything first: a variant that does not lower fails before the GPU is busy.
  std::vector<sched::LoweredProgram> lowered;
  for (const Variant& v : variants) {
    sched::LowerOptions options;
    options.overrides = v.overrides;
    options.replica_count = args.replicas;
    options.num_partitions = args.partitions;
    SL_ASSIGN_OR_RETURN(sched::LoweredProgram program, sched::lower(module, options));
    lowered.push_back(std::move(program));
  }
  std::vector<Measurement> out(variants.size());
  ProgressBar progress("verifying on " + backend_name);
  const auto total = static_cast<int64_t>(variants.size()) * args.repeats;
  int64_t done = 0;
  for (int repeat = 0; repeat < args.repeats; ++repeat) {
    for (size_t step = 0; step < variants.size(); ++step) {
      const size_t k = repeat % 2 == 0 ? step : variants.size() - 1 - step;
      const Variant& v = variants[k];
      const sched::LoweredProgram& program = lowered[k];
      trace::RunInfo info;
      info.name = module.name + " suggest " + v.label + " #" + std::to_string(repeat + 1);
      info.program_name = module.name;
      info.backend = backend_name;
      info.device_model = device_name;
      info.num_devices = static_cast<int64_t>(program.devices.size());
      info.config_json = config_json(args, backend_name, v, repeat, program.replica_count, program.num_partitions);
      exec::RunOptions options;
      options.warmup = args.warmup;
      options.iterations = args.iterations;
      options.allow_tf32 = args.allow_tf32;
      options.comm_sms = v.comm_sms;
      SL_ASSIGN_OR_RETURN(app::RecordedRun run, app::record_run(store, info, module.source_text, program.streams,
                                                                backend, program, options));
      out[k].makespans_ns.push_back(trace::representative_iteration(run.output.trace).makespan_ns());
      out[k].run_ids.push_back(run.run_id);
      progress.update(++done, total);
    }
  }
  return out;
}

}  // namespace sl::cli
