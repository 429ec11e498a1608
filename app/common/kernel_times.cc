#include "app/common/kernel_times.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "app/common/command_buffer_setup.h"
#include "app/common/run_ref.h"
#include "core/hlo/parser.h"
#include "core/trace/store/trace_store.h"
#include "core/xla/autotune_log.h"
#include "core/xla/instruction_match.h"
#include "sim/device_model.h"
#include "sim/sim_backend.h"

namespace sl::app {

namespace {

// The file of the run's linked module, or "" when its config names none.
std::string linked_module_of(const nlohmann::json& config) {
  const std::string key(trace::kLinkedModuleKey);
  if (!config.is_object() || !config.contains(key) || !config[key].is_string()) return {};
  return config[key].get<std::string>();
}

// That module, parsed: an error where the run names none or it does not parse.
Result<hlo::Module> parsed_linked_module(const std::string& linked) {
  if (linked.empty()) return not_found("the run names no linked module");
  return hlo::parse_program_file(linked);
}

// MeasuredTimes::source_of, from the run's linked module (`linked`, parsed
// as `source`; instructions match by name without it).
void match_instructions(const std::string& linked, const hlo::Module& source, const hlo::Module& target,
                        const std::string& target_path, sim::MeasuredTimes& measured) {
  measured.source_of =
      xla::match_by_content(xla::instruction_fingerprints(target), xla::instruction_fingerprints(source));
  measured.renamed = 0;
  for (const auto& [name, partner] : measured.source_of) measured.renamed += !partner.empty() && partner != name;
  // Another file is another compilation, or the same one run again (XLA
  // compiles the same HLO when command buffers are all it changes): either
  // way another call, with its own host pace.
  std::error_code ec;
  const bool same_file = !target_path.empty() && std::filesystem::equivalent(linked, target_path, ec) && !ec;
  measured.another_module = target_path.empty() ? source.source_text != target.source_text : !same_file;
}

// An autotuning log's times of `module`'s instructions; nothing where there
// is no log beside `module_path` (a warning where one does not read).
std::unordered_map<std::string, xla::AutotunedTime> autotuned_times(const std::string& module_path,
                                                                    const hlo::Module& module) {
  const std::string path = xla::autotune_log_path_for(module_path);
  if (path.empty()) return {};
  auto log = xla::read_autotune_log(path);
  if (!log) {
    fmt::print(stderr, "warning: {} (its autotuned times are not used)\n", log.status().message());
    return {};
  }
  return xla::autotuned_times_of(*log, module);
}

// MeasuredTimes::autotuned from the simulated module's autotuning log,
// and its overhead from the measured run's own log (sim/trace_driven.h;
// `source`: the run's linked module, parsed, or null).
void read_autotune_logs(const std::string& linked, const hlo::Module* source, const hlo::Module& target,
                        const std::string& target_path, sim::MeasuredTimes& measured) {
  if (target_path.empty()) return;
  measured.autotuned = autotuned_times(target_path, target);
  if (measured.autotuned.empty()) return;
  sim::estimate_autotune_overhead(measured, source != nullptr
                                                ? autotuned_times(linked, *source)
                                                : std::unordered_map<std::string, xla::AutotunedTime>{});
}

}  // namespace

Result<sim::MeasuredTimes> measured_kernel_times(const std::string& db, const std::string& run, int64_t* run_id,
                                                 const sim::DeviceModel* host_costs_of, const hlo::Module* target,
                                                 const std::string& target_path) {
  SL_ASSIGN_OR_RETURN(auto store, trace::TraceStore::open(db, trace::TraceStore::Mode::kReadOnly));
  SL_ASSIGN_OR_RETURN(StoredRun measured_run, load_stored_run(*store, run));
  if (run_id != nullptr) *run_id = measured_run.id;
  if (!is_linked_run(measured_run.info)) {
    return invalid_input(fmt::format("--kernel-times {}: run {} has no steps: link it to its XLA module first "
                                     "(streamlens link RUN MODULE.txt, or capture --xla-dump)",
                                     run, measured_run.id));
  }
  auto measured = sim::measured_times(measured_run.trace);
  if (!measured) return invalid_input(fmt::format("--kernel-times {}: {}", run, measured.status().message()));
  // Which of its instructions the measured run launched inside command
  // buffers, from the dump beside the module it was linked to (when still there).
  auto config = nlohmann::json::parse(measured_run.info.config_json, nullptr, false);
  if (const std::string linked = linked_module_of(config); !linked.empty()) {
    LaunchedInstructions launched = launched_instructions(linked);
    measured->in_graph = std::move(launched.in_graph);
    measured->graph_first = std::move(launched.graph_first);
    measured->graph_after = std::move(launched.graph_after);
    measured->graph_after_pdl_launch = std::move(launched.graph_after_pdl_launch);
    measured->graph_mode_known = launched.known;
    measured->host_work = std::move(launched.host_work);
  }
  if (!measured->graph_mode_known && config.is_object() && config.contains("linked_thunks") &&
      config["linked_thunks"].is_string()) {
    // The dump is gone, but its name says: XLA writes one after the thunk
    // passes only when they formed command buffers (command_buffer_setup).
    const std::string thunks = config["linked_thunks"].get<std::string>();
    measured->graph_mode_known = thunks.find("after_thunk_passes") == std::string::npos;
  }
  // A negative gap is kept for graph nodes only, whose successors really
  // start before CUPTI's end of their predecessor; outside graphs the stream
  // model replays idle time alone (as fitted on mlp_nocb, bench/FIDELITY-real.md).
  // A kernel launched alone that starts before its stream predecessor ends
  // was launched early (programmatic dependent launch: the cuBLAS kernel
  // before it let it start) and waited inside: its own time is what is left
  // after the predecessor's end (embed_xent_step cb-off: one fusion started
  // 345 us before its GEMM ended). Unknown: the simulator keeps them for its
  // own graph nodes only.
  for (auto& [instruction, gap] : measured->gap_ns_per_step) {
    if (measured->graph_mode_known && gap < 0 && measured->in_graph.count(instruction) == 0) {
      if (auto ns = measured->ns_per_step.find(instruction); ns != measured->ns_per_step.end()) {
        ns->second = std::max<int64_t>(1, ns->second + gap);
      }
      gap = 0;
    }
  }
  if (target != nullptr) {
    // The linked module parsed once, for matching and for its autotuning log.
    const std::string linked = linked_module_of(config);
    Result<hlo::Module> source = parsed_linked_module(linked);
    if (source) match_instructions(linked, *source, *target, target_path, *measured);
    read_autotune_logs(linked, source ? &*source : nullptr, *target, target_path, *measured);
  }
  // Graph nodes not known apart from kernels launched alone: no estimate
  // (a graph's nodes would pass for launches), the device file's costs.
  if (host_costs_of != nullptr) {
    measured->host_costs = measured->graph_mode_known
                               ? sim::estimate_host_costs(measured_run.trace, measured->in_graph, *host_costs_of,
                                                                   measured->host_work)
                               : sim::HostCostEstimate{};
  }
  return measured;
}

Result<std::map<std::string, int64_t>> measured_loop_trips(const std::string& db, const std::string& run,
                                                           const hlo::Module& module) {
  std::vector<std::string> loops;
  for (const hlo::Computation& c : module.computations) {
    for (const hlo::Instruction& i : c.instructions) {
      if (i.opcode == hlo::Opcode::kWhile && !i.known_trip_count) loops.push_back(i.name);
    }
  }
  std::map<std::string, int64_t> out;
  if (loops.empty()) return out;
  SL_ASSIGN_OR_RETURN(auto store, trace::TraceStore::open(db, trace::TraceStore::Mode::kReadOnly));
  SL_ASSIGN_OR_RETURN(StoredRun measured_run, load_stored_run(*store, run));
  // The run's name for each loop: another compilation may number it anew.
  sim::MeasuredTimes names;
  const std::string linked = linked_module_of(nlohmann::json::parse(measured_run.info.config_json, nullptr, false));
  if (auto source = parsed_linked_module(linked)) {
    match_instructions(linked, *source, module, "", names);
  }
  auto run_name = [&](const std::string& loop) {
    const std::string name = names.source(loop);
    return name.empty() ? loop : name;
  };
  std::map<std::string, std::map<int32_t, int64_t>> copies;  // the run's loop -> step -> predicate copies
  for (const std::string& loop : loops) copies[run_name(loop)];
  const trace::Trace& t = measured_run.trace;
  for (const trace::Event& e : t.events) {
    if (e.iteration < 0 || e.instruction == 0 || e.kind != trace::EventKind::kCopy) continue;
    if (auto it = copies.find(t.instruction_of(e)); it != copies.end()) ++it->second[e.iteration];
  }
  for (const std::string& loop : loops) {
    const auto& per_step = copies[run_name(loop)];
    if (per_step.empty()) continue;
    std::vector<int64_t> n;
    for (const auto& [step, count] : per_step) n.push_back(count);
    std::sort(n.begin(), n.end());
    out[loop] = std::max<int64_t>(0, n[n.size() / 2] - 1);
  }
  return out;
}

Result<TraceDrivenBackend> trace_driven_backend(const std::string& db, const std::string& run,
                                                const std::string& device, sim::LaunchSetup launch,
                                                bool host_costs_from_capture, const hlo::Module* target,
                                                const std::string& target_path) {
  int64_t run_id = 0;
  SL_ASSIGN_OR_RETURN(sim::DeviceModel model, sim::load_device_model(device));
  SL_ASSIGN_OR_RETURN(sim::MeasuredTimes measured,
                      measured_kernel_times(db, run, &run_id, host_costs_from_capture ? &model : nullptr, target,
                                            target_path));
  TraceDrivenBackend out;
  if (measured.renamed > 0) {
    out.matching = fmt::format("kernel times by content: {} instructions of this module have their work under "
                               "another name in run {}'s module (XLA numbers each compilation anew)",
                               measured.renamed, run_id);
  }
  out.run_id = run_id;
  out.description = fmt::format("{} + kernel times of run {} ({} steps)", device, run_id, measured.steps);
  if (!host_costs_from_capture) {
    out.host_costs = fmt::format("host costs: {}'s device file (--host-costs device)", device);
  } else if (launch.xla_executable) {
    out.host_costs = fmt::format("host costs from run {}: {}", run_id, sim::host_costs_line(*measured.host_costs, model));
  }
  out.backend = sim::make_trace_driven_sim_backend(std::move(model), std::move(measured), std::move(launch));
  return out;
}

std::string device_of_capture(const trace::RunInfo& info) {
  const std::string stock = sim::stock_device_for_gpu(info.device_model);
  return stock.empty() ? "h200" : stock;
}

Result<DeviceOfRun> device_of_run(const std::string& db, const std::string& run) {
  SL_ASSIGN_OR_RETURN(auto store, trace::TraceStore::open(db, trace::TraceStore::Mode::kReadOnly));
  SL_ASSIGN_OR_RETURN(int64_t id, resolve_run(*store, run));
  SL_ASSIGN_OR_RETURN(trace::RunInfo info, store->run_info(id));
  DeviceOfRun out{device_of_capture(info), ""};
  if (info.backend != "capture") return out;  // measured_kernel_times refuses it
  if (!sim::stock_device_for_gpu(info.device_model).empty()) {
    out.note = fmt::format("device {}: run {} ran on {} (--device to choose another)", out.device, id,
                           info.device_model);
  } else if (info.device_model.empty() || info.device_model == trace::kUnnamedCaptureDevice) {
    out.note = fmt::format("device {}: run {} does not say which GPU it ran on (--device to choose another)",
                           out.device, id);
  } else {
    out.note = fmt::format("device {}: run {} ran on {}, which no stock device file describes (--device to "
                           "choose another)",
                           out.device, id, info.device_model);
  }
  return out;
}

KernelTimesSource kernel_times_source(const trace::RunInfo& info) {
  KernelTimesSource out;
  auto config = nlohmann::json::parse(info.config_json, nullptr, false);
  if (!config.is_object()) return out;
  auto text = [&](const char* key) {
    return config.contains(key) && config[key].is_string() ? config[key].get<std::string>() : std::string();
  };
  if (info.backend == "capture" && is_linked_run(info)) {
    out.run = info.id;
    out.module_path = text("linked_module");
    out.device = device_of_capture(info);
  } else if (info.backend == "sim" && config.contains("kernel_times") && config["kernel_times"].is_number_integer()) {
    out.run = config["kernel_times"].get<int64_t>();
    out.module_path = text("module_path");
    if (!text("device").empty()) out.device = text("device");
  }
  return out;
}

}  // namespace sl::app
