#include "app/common/command_buffer_setup.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <set>
#include <unordered_map>

#include "core/hlo/parser.h"
#include "core/xla/launch_plan.h"
#include "core/xla/thunk_sequence.h"

namespace sl::app {
namespace {

// Only the dump after the thunk passes says whether command buffers were
// formed (the plain one lists the thunks before they are).
std::string dump_beside(const std::string& module_path) { return xla::thunk_sequence_path_for(module_path, true); }

// Each launch of the plan as a thunk of one device's program (-1: none): a
// launch takes the next thunk of its instruction, in order. `unmatched`
// counts launches of an instruction with no thunk left.
std::vector<int64_t> thunk_of_launch(const xla::LaunchPlan& plan, const sched::DeviceProgram& program,
                                     int64_t* unmatched) {
  std::unordered_map<std::string_view, std::deque<uint32_t>> by_name;
  for (size_t i = 0; i < program.thunks.size(); ++i) {
    const sched::Thunk& t = program.thunks[i];
    if (t.kind == sched::ThunkKind::kRecordEvent || t.kind == sched::ThunkKind::kWaitEvent) continue;
    by_name[t.attributed_name].push_back(static_cast<uint32_t>(i));
  }
  std::vector<int64_t> thunk_of(plan.launches.size(), -1);
  for (size_t i = 0; i < plan.launches.size(); ++i) {
    const xla::PlannedLaunch& l = plan.launches[i];
    if (l.instruction.empty()) continue;
    auto it = by_name.find(l.instruction);
    if (it == by_name.end() || it->second.empty()) {
      if (unmatched != nullptr) ++*unmatched;
      continue;
    }
    thunk_of[i] = it->second.front();
    it->second.pop_front();
  }
  return thunk_of;
}

// The plan's graphs as thunks of one device's program.
std::vector<sched::CommandBuffer> graphs_of_device(const xla::LaunchPlan& plan, const sched::DeviceProgram& program,
                                                 int64_t* unmatched) {
  const std::vector<int64_t> thunk_of = thunk_of_launch(plan, program, unmatched);
  const size_t n = plan.launches.size();
  std::vector<sched::CommandBuffer> graphs(static_cast<size_t>(plan.graph_launches));
  std::vector<int> node_of(n, -1);
  // A launch with no thunk (a memset) passes its own predecessors on.
  std::vector<std::vector<int>> passed(n);
  for (size_t i = 0; i < n; ++i) {
    const xla::PlannedLaunch& l = plan.launches[i];
    if (l.graph < 0 || l.graph >= plan.graph_launches) continue;
    std::vector<int> deps;
    for (int64_t d : l.graph_deps) {
      if (d < 0 || static_cast<size_t>(d) >= i || plan.launches[static_cast<size_t>(d)].graph != l.graph) continue;
      if (node_of[static_cast<size_t>(d)] >= 0) {
        deps.push_back(node_of[static_cast<size_t>(d)]);
      } else {
        deps.insert(deps.end(), passed[static_cast<size_t>(d)].begin(), passed[static_cast<size_t>(d)].end());
      }
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    if (thunk_of[i] < 0) {
      passed[i] = std::move(deps);
      continue;
    }
    sched::CommandBuffer& g = graphs[static_cast<size_t>(l.graph)];
    if (static_cast<size_t>(l.graph) < plan.rerecorded_commands.size()) {
      g.rerecorded_commands = plan.rerecorded_commands[static_cast<size_t>(l.graph)];
      g.retraced_commands = plan.retraced_commands[static_cast<size_t>(l.graph)];
      g.blas_commands = plan.blas_commands[static_cast<size_t>(l.graph)];
    }
    node_of[i] = static_cast<int>(g.thunks.size());
    g.thunks.push_back(static_cast<uint32_t>(thunk_of[i]));
    g.deps.push_back(std::move(deps));
    g.copies.push_back(l.kind == xla::LaunchKind::kCopy ? 1 : 0);
  }
  std::erase_if(graphs, [](const sched::CommandBuffer& g) { return g.thunks.empty(); });
  return graphs;
}

// The thunks before which XLA's host syncs (sim::LaunchSetup::host_syncs),
// and per sync the launches of the loop condition the host issues first
// with the predicate copy (launches_before_syncs); a sync before a launch
// with no thunk moves to the next one that has one.
void syncs_of_device(const xla::LaunchPlan& plan, const sched::DeviceProgram& program, sim::LaunchSetup& setup) {
  const std::vector<int64_t> thunk_of = thunk_of_launch(plan, program, nullptr);
  std::vector<uint32_t>& syncs = setup.host_syncs.emplace_back();
  std::vector<int64_t>& before = setup.launches_before_syncs.emplace_back();
  bool pending = false;
  int64_t condition_launches = 0;
  for (size_t i = 0; i < plan.launches.size(); ++i) {
    const xla::PlannedLaunch& l = plan.launches[i];
    if (l.host_sync_before && !pending) {
      pending = true;
      condition_launches = 1;  // the predicate copy, in no dump
      for (size_t k = i; k > 0 && !plan.launches[k - 1].condition_of.empty(); --k) ++condition_launches;
    }
    if (thunk_of[i] < 0) continue;
    if (pending) {
      syncs.push_back(static_cast<uint32_t>(thunk_of[i]));
      before.push_back(condition_launches);
    }
    pending = false;
  }
}

// The thunks that launch a dynamic-slice fusion's work
// (sim::LaunchSetup::dynamic_slices), each once.
std::vector<uint32_t> dynamic_slices_of_device(const xla::LaunchPlan& plan, const sched::DeviceProgram& program) {
  const std::vector<int64_t> thunk_of = thunk_of_launch(plan, program, nullptr);
  std::vector<uint32_t> out;
  for (size_t i = 0; i < plan.launches.size(); ++i) {
    if (plan.launches[i].dynamic_slice && thunk_of[i] >= 0) out.push_back(static_cast<uint32_t>(thunk_of[i]));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Where XLA's host blocks, and which thunks are dynamic-slice fusions, from
// whichever thunk dump is beside the module (none: nowhere, none).
void set_host_work(const std::string& module_path, const hlo::Module& module, const sched::LoweredProgram& lowered,
                   const std::map<std::string, int64_t>& trips, sim::LaunchSetup& setup) {
  std::string dump = xla::thunk_sequence_path_for(module_path, true);
  if (dump.empty()) dump = xla::thunk_sequence_path_for(module_path, false);
  if (dump.empty()) return;
  auto thunks = xla::read_thunk_sequence(dump);
  if (!thunks) return;
  const xla::LaunchPlan plan = xla::plan_from_thunks(*thunks, &module, 1u << 22, trips);
  for (const sched::DeviceProgram& program : lowered.devices) {
    syncs_of_device(plan, program, setup);
    setup.dynamic_slices.push_back(dynamic_slices_of_device(plan, program));
  }
}

}  // namespace

Result<CommandBufferInfo> command_buffer_setup(const std::string& module_path, const hlo::Module& module,
                                               const sched::LoweredProgram& lowered, const std::string& mode,
                                               const std::map<std::string, int64_t>& trips) {
  CommandBufferInfo info;
  info.dump_path = dump_beside(module_path);
  if (mode == "off") {
    // Launched one by one by XLA's host thunks, with or without a dump.
    info.setup.xla_executable = true;
    info.setup.command_buffers = false;
    set_host_work(module_path, module, lowered, trips, info.setup);
    return info;
  }
  if (info.dump_path.empty() && !xla::thunk_sequence_path_for(module_path, false).empty()) {
    // XLA writes the dump after the thunk passes only when they formed
    // command buffers: with the plain dump alone, every kernel is launched alone.
    if (mode == "on") {
      return invalid_input(fmt::format("--command-buffers on: {} has a thunk dump but none after the thunk passes: "
                                       "XLA formed no command buffers for it (forming them is not modelled)",
                                       module_path));
    }
    info.setup.xla_executable = true;
    info.setup.command_buffers = true;
    set_host_work(module_path, module, lowered, trips, info.setup);
    return info;
  }
  if (info.dump_path.empty()) {
    if (mode == "on") {
      return invalid_input(fmt::format("--command-buffers on: {} has no thunk dump beside it (XLA's "
                                       "*.thunk_sequence_after_thunk_passes.txt) to read its command buffers from",
                                       module_path));
    }
    return info;
  }
  SL_ASSIGN_OR_RETURN(xla::ThunkSequence thunks, xla::read_thunk_sequence(info.dump_path));
  if (mode == "on" && !thunks.has_command_buffers) {
    return invalid_input(fmt::format("--command-buffers on: {} shows no command buffers (XLA compiled the module "
                                     "with them off; forming graphs it did not is not modelled)",
                                     info.dump_path));
  }
  const xla::LaunchPlan plan = xla::plan_from_thunks(thunks, &module, 1u << 22, trips);
  info.setup.xla_executable = true;
  info.setup.command_buffers = true;
  info.graph_launches = plan.graph_launches;
  for (size_t d = 0; d < lowered.devices.size(); ++d) {
    syncs_of_device(plan, lowered.devices[d], info.setup);
    info.setup.dynamic_slices.push_back(dynamic_slices_of_device(plan, lowered.devices[d]));
    int64_t unmatched = 0;
    info.setup.graphs.push_back(graphs_of_device(plan, lowered.devices[d], &unmatched));
    if (d == 0) {
      info.unmatched_launches = unmatched;
      for (const sched::CommandBuffer& g : info.setup.graphs.back()) {
        info.graph_nodes += static_cast<int64_t>(g.thunks.size());
        info.rerecorded_launches += g.rerecorded_commands > 0;
      }
    }
  }
  return info;
}

std::set<std::string> graph_node_instructions(const CommandBufferInfo& info, const sched::LoweredProgram& lowered) {
  std::set<std::string> out;
  if (!info.setup.command_buffers || info.setup.graphs.empty() || lowered.devices.empty()) return out;
  const std::vector<sched::Thunk>& thunks = lowered.devices[0].thunks;
  for (const sched::CommandBuffer& graph : info.setup.graphs[0]) {
    for (uint32_t t : graph.thunks) {
      if (t < thunks.size() && thunks[t].instruction != nullptr) out.insert(thunks[t].instruction->name);
    }
  }
  return out;
}

std::vector<std::string> overridden_graph_nodes(const CommandBufferInfo& info, const sched::LoweredProgram& lowered,
                                                const sched::StreamOverrides& overrides) {
  std::vector<std::string> out;
  if (overrides.empty()) return out;
  for (const std::string& node : graph_node_instructions(info, lowered)) {
    if (overrides.count(node)) out.push_back(node);
  }
  return out;
}

LaunchedInstructions launched_instructions(const std::string& module_path) {
  LaunchedInstructions out;
  std::string dump = dump_beside(module_path);
  // The plain dump alone: XLA formed no command buffers (command_buffer_setup).
  const bool plain = dump.empty();
  if (plain) {
    dump = xla::thunk_sequence_path_for(module_path, false);
    out.known = !dump.empty();
  }
  if (dump.empty()) return out;
  auto module = hlo::parse_program_file(module_path);
  auto thunks = xla::read_thunk_sequence(dump);
  if (!module || !thunks) return out;
  const xla::LaunchPlan plan = xla::plan_from_thunks(*thunks, &*module);
  int64_t last_graph = -1;
  bool last_pdl_launch = false;  // the graph's launch before was launched with PDL
  for (const xla::PlannedLaunch& l : plan.launches) {
    const bool first_of_graph = l.in_command_buffer && l.graph >= 0 && l.graph != last_graph;
    const bool after_pdl_launch = l.in_command_buffer && !first_of_graph && last_pdl_launch;
    if (l.in_command_buffer && l.graph >= 0) {
      last_graph = l.graph;
      last_pdl_launch = l.pdl_launch;
    }
    if (l.instruction.empty()) continue;
    if (l.dynamic_slice) out.host_work.dynamic_slice.insert(l.instruction);
    if (l.kind == xla::LaunchKind::kDnn) out.host_work.dnn_call.insert(l.instruction);
    if (plain || !l.in_command_buffer) continue;
    out.in_graph.insert(l.instruction);
    if (first_of_graph) out.graph_first.insert(l.instruction);
    if (!l.graph_deps.empty()) out.graph_after.insert(l.instruction);
    if (after_pdl_launch && !l.graph_deps.empty()) out.graph_after_pdl_launch.insert(l.instruction);
    if (l.graph >= 0 && static_cast<size_t>(l.graph) < plan.rerecorded_commands.size() &&
        plan.rerecorded_commands[static_cast<size_t>(l.graph)] > 0) {
      out.host_work.rerecorded_commands[l.instruction] = plan.rerecorded_commands[static_cast<size_t>(l.graph)];
      out.host_work.retraced_commands[l.instruction] = plan.retraced_commands[static_cast<size_t>(l.graph)];
    }
    if (l.graph >= 0 && static_cast<size_t>(l.graph) < plan.blas_commands.size() &&
        plan.blas_commands[static_cast<size_t>(l.graph)] > 0) {
      out.host_work.blas_commands[l.instruction] = plan.blas_commands[static_cast<size_t>(l.graph)];
    }
  }
  out.known = true;
  return out;
}

std::string command_buffer_line(const CommandBufferInfo& info) {
  if (!info.setup.xla_executable) return "";
  if (info.dump_path.empty() && info.setup.command_buffers) {
    return "command buffers: none formed by XLA (no thunk dump after the thunk passes): every kernel launched alone";
  }
  if (!info.setup.command_buffers) {
    return "command buffers off: every kernel launched by the host one by one (host_kernel_launch_us)";
  }
  return fmt::format("command buffers ({}): {} graph launch{} an execution, {} thunks of device 0 as graph nodes{}{}",
                     info.dump_path, info.graph_launches, info.graph_launches == 1 ? "" : "es", info.graph_nodes,
                     info.rerecorded_launches > 0
                         ? fmt::format(", {} launches recorded again first (a dynamic-slice fusion inside)",
                                       info.rerecorded_launches)
                         : "",
                     info.unmatched_launches > 0
                         ? fmt::format(" ({} launches of the dump matched no thunk)", info.unmatched_launches)
                         : "");
}

std::string command_buffer_text(const CommandBufferInfo& info, const sched::LoweredProgram& lowered, int64_t device) {
  if (!info.setup.xla_executable || !info.setup.command_buffers) return "";
  std::string out = "\n" + command_buffer_line(info) + "\n";
  const auto d = static_cast<size_t>(std::max<int64_t>(0, device));
  if (d >= info.setup.graphs.size() || d >= lowered.devices.size()) return out;
  const auto& graphs = info.setup.graphs[d];
  const auto& thunks = lowered.devices[d].thunks;
  for (size_t g = 0; g < graphs.size() && g < 20; ++g) {
    out += fmt::format("graph {} ({} nodes): thunk[after nodes]", g, graphs[g].thunks.size());
    for (size_t k = 0; k < graphs[g].thunks.size(); ++k) {
      out += fmt::format(" {}:{}", k, graphs[g].thunks[k]);
      if (!graphs[g].deps[k].empty()) out += fmt::format("[{}]", fmt::join(graphs[g].deps[k], ","));
      if (k == 0) out += fmt::format(" ({})", thunks[graphs[g].thunks[k]].attributed_name);
    }
    out += "\n";
    // What --backend cuda does with it (core/sched/command_buffer.h).
    const std::string why = sched::command_buffer_refusal(lowered.devices[d], graphs[g], nullptr);
    if (why.empty()) {
      const uint32_t first = *std::min_element(graphs[g].thunks.begin(), graphs[g].thunks.end());
      out += fmt::format("  cuda: one CUDA graph, launched on stream {} at thunk {}\n", thunks[first].stream, first);
    } else {
      out += fmt::format("  cuda: stream launches: {}\n", why);
    }
  }
  if (graphs.size() > 20) out += fmt::format("... {} more graphs\n", graphs.size() - 20);
  return out;
}

}  // namespace sl::app
