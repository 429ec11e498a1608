#include "app/cli/xla_link.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/hlo/parser.h"
#include "core/xla/launch_plan.h"
#include "core/xla/thunk_sequence.h"

namespace sl::cli {
namespace {

Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalid_input(fmt::format("{}: cannot be read", path));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

Result<LinkedModule> link_to_module(trace::Trace& trace, const std::string& module_path,
                                    const std::string& thunks_path) {
  LinkedModule linked;
  linked.module_path = module_path;
  auto text = read_text(module_path);
  if (!text) return text.status();
  auto module = hlo::parse_program(*text, module_path);
  if (!module) return module.status();
  linked.module_name = module->name;
  linked.module_text = std::move(*text);
  // The dump after the thunk passes shows the command buffers; the order of
  // launches is the same in both.
  linked.thunks_path = thunks_path;
  if (linked.thunks_path.empty()) linked.thunks_path = xla::thunk_sequence_path_for(module_path, true);
  if (linked.thunks_path.empty()) linked.thunks_path = xla::thunk_sequence_path_for(module_path, false);
  xla::LaunchPlan plan;
  if (!linked.thunks_path.empty()) {
    auto thunks = xla::read_thunk_sequence(linked.thunks_path);
    if (!thunks) return thunks.status();
    plan = xla::plan_from_thunks(*thunks, &*module);
  } else {
    plan = xla::plan_from_module(*module);
  }
  linked.summary = xla::link_steps(trace, plan);
  return linked;
}

Result<LinkedModule> link_to_dump_dir(trace::Trace& trace, const std::string& dump_dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dump_dir, ec)) return invalid_input(fmt::format("{}: not a directory", dump_dir));
  std::optional<LinkedModule> best;
  trace::Trace best_trace;
  std::string problems;
  for (const auto& entry : std::filesystem::directory_iterator(dump_dir, ec)) {
    const std::string path = entry.path().string();
    if (path.find("_gpu_after_optimizations.txt") == std::string::npos) continue;
    trace::Trace attempt = trace;
    auto linked = link_to_module(attempt, path, "");
    if (!linked) {
      problems += "\n  " + linked.status().message().substr(0, 300);
      continue;
    }
    if (!best || linked->summary.work_ns_linked > best->summary.work_ns_linked) {
      best = std::move(*linked);
      best_trace = std::move(attempt);
    }
  }
  if (!best || best->summary.steps.empty()) {
    return invalid_input(fmt::format("no module of {} ran in the capture{}", dump_dir,
                                     problems.empty() ? "" : " (modules that did not load:" + problems + ")"));
  }
  trace = std::move(best_trace);
  return std::move(*best);
}

Result<int64_t> save_linked_run(trace::TraceStore& store, trace::RunInfo info, const LinkedModule& linked,
                                const trace::Trace& trace, int64_t source_run) {
  info.program_name = linked.module_name;
  nlohmann::json config = nlohmann::json::object();
  if (!info.config_json.empty()) {
    config = nlohmann::json::parse(info.config_json, nullptr, false);
    if (!config.is_object()) config = nlohmann::json::object();
  }
  config[std::string(trace::kLinkedModuleKey)] = linked.module_path;
  config["linked_thunks"] = linked.thunks_path;
  config["steps"] = linked.summary.steps.size();
  if (source_run > 0) config["linked_from_run"] = source_run;
  info.config_json = config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return store.save_run(info, linked.module_text, {}, trace);
}

trace::RunInfo captured_run_info(const std::string& name, const std::string& program, const std::string& config,
                                 const trace::Trace& trace) {
  trace::RunInfo info;
  info.name = name;
  info.program_name = program;
  info.backend = "capture";
  info.device_model = trace.gpu_name.empty() ? trace::kUnnamedCaptureDevice : trace.gpu_name;
  info.config_json = config;
  int64_t max_device = -1;
  for (const trace::Event& e : trace.events) max_device = std::max<int64_t>(max_device, e.device);
  info.num_devices = max_device + 1;
  return info;
}

std::string link_summary_line(const LinkedModule& linked) {
  const xla::LinkSummary& s = linked.summary;
  const double share = s.work_ns_in_steps > 0 ? 100.0 * static_cast<double>(s.work_ns_linked) /
                                                    static_cast<double>(s.work_ns_in_steps)
                                              : 0.0;
  return fmt::format("{} steps of {}, {:.1f}% of the GPU time in steps linked to instructions ({} of {} records; "
                     "{} records outside steps)",
                     s.steps.size(), linked.module_name, share, s.events_linked, s.events_in_steps,
                     s.events_outside_steps);
}

}  // namespace sl::cli
