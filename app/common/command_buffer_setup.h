#pragma once
// How an XLA module's kernels are launched, read from the thunk dump XLA
// wrote beside it: which thunks run as nodes of which command buffer (CUDA
// graph), with the DAG between them (sim/command_buffers.h). Used by
// `run --backend sim` (`--command-buffers`) and `lower`.

#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/common/status.h"
#include "core/hlo/module.h"
#include "core/sched/lowering.h"
#include "sim/sim_backend.h"

namespace sl::app {

struct CommandBufferInfo {
  sim::LaunchSetup setup;
  std::string dump_path;       // empty: no *.thunk_sequence_after_thunk_passes.txt beside the module
  int64_t graph_launches = 0;  // per device, one execution
  int64_t graph_nodes = 0;     // thunks of device 0 that are graph nodes
  int64_t rerecorded_launches = 0;  // graph launches XLA records again first (device 0)
  int64_t unmatched_launches = 0;  // launches of the dump with no thunk of that instruction
};

// `mode`: "auto" (as the dump after the thunk passes says; with only the
// plain thunk dump, which XLA writes alone when it formed no command buffer,
// every kernel launched alone; with no dump, as any HLO program:
// kernel_launch_us), "on" (the dump must show command buffers), "off" (every kernel
// launched by the host one by one). Errors name the module and the dump.
// `trips`: the trips of loops without a known trip count the lowering ran
// (sched::LowerOptions::trip_counts), for the launch plan.
Result<CommandBufferInfo> command_buffer_setup(const std::string& module_path, const hlo::Module& module,
                                               const sched::LoweredProgram& lowered, const std::string& mode,
                                               const std::map<std::string, int64_t>& trips = {});

// What a module's thunk dump says about how its instructions are launched:
// inside command buffers (`in_graph`; `known` false when the dump is missing
// or unreadable), as dynamic-slice fusions, as nodes of graphs XLA records
// again before each launch.
struct LaunchedInstructions {
  std::unordered_set<std::string> in_graph;
  // Of those, each graph's first launch (its idle time before is the graph
  // launch's), and those after a predecessor of their graph (theirs is the
  // graph's own latency): sim::MeasuredTimes::graph_first, graph_after.
  std::unordered_set<std::string> graph_first;
  std::unordered_set<std::string> graph_after;
  // Of those after a predecessor, the ones right after a kernel launched
  // with programmatic dependent launch: sim::MeasuredTimes::graph_after_pdl_launch.
  std::unordered_set<std::string> graph_after_pdl_launch;
  bool known = false;
  sim::HostWorkOf host_work;
};
LaunchedInstructions launched_instructions(const std::string& module_path);

// The instructions that run as graph nodes under `info` (device 0): inside
// a command buffer XLA orders work by the graph's edges, not by streams, so
// moving one to another stream changes nothing.
std::set<std::string> graph_node_instructions(const CommandBufferInfo& info, const sched::LoweredProgram& lowered);
// Those of them that `overrides` moves, sorted.
std::vector<std::string> overridden_graph_nodes(const CommandBufferInfo& info, const sched::LoweredProgram& lowered,
                                                const sched::StreamOverrides& overrides);

// "command buffers (DUMP): 1 graph launch a step, 17 of 17 thunks as graph
// nodes", and how many launches XLA records again first.
std::string command_buffer_line(const CommandBufferInfo& info);

// For `lower`: the line above, then per graph of `device` (at most 20) its
// nodes as thunk indices with the nodes each waits for, and whether the cuda
// backend runs it as one CUDA graph. Empty without a dump.
std::string command_buffer_text(const CommandBufferInfo& info, const sched::LoweredProgram& lowered, int64_t device);

}  // namespace sl::app
