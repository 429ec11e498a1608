#pragma once
// Command buffers (CUDA graphs) as XLA executes them (docs/simulator.md,
// "Command buffers"): one launch of a graph runs its nodes in DAG order,
// not in the streams the HLO names. The simulator has streams only, so a
// graph becomes lanes: node k runs on a lane after its DAG predecessors
// (events between lanes), at most DeviceModel::graph_concurrency lanes a
// graph, the first lane being the stream that launched it; the stream waits
// for every lane before the work after the graph. Work that the HLO put on
// another stream but that is a node of the graph runs as a node.

#include <cstdint>
#include <vector>

#include "core/common/status.h"
#include "core/sched/command_buffer.h"
#include "core/sched/thunk.h"
#include "core/trace/trace.h"
#include "sim/device_model.h"
#include "sim/engine.h"

namespace sl::sim {

// The graph description lives in core (the cuda backend runs graphs too).
using CommandBuffer = sched::CommandBuffer;

enum class LaunchRole : int8_t {
  kStream,      // launched by the host one by one: DeviceModel::stream_kernel_gap_us after its predecessor
  kGraphStart,  // a lane's first node with no predecessor: it starts after the graph launch (graph_launch_us)
  kGraphNode,   // a node after its predecessors: graph_node_gap_us
  kSynthetic,   // an event record/wait the lanes added
};

struct GraphProgram {
  std::vector<sched::DeviceProgram> devices;
  // Per device, per thunk of `devices`: its index in the original program
  // (kSynthetic ones: UINT32_MAX) and its launch role.
  std::vector<std::vector<uint32_t>> original;
  std::vector<std::vector<LaunchRole>> role;
  // Per device, per thunk: the graph launch it is a node of (0, 1, ... in
  // program order), -1 for none.
  std::vector<std::vector<int64_t>> graph_of;
  // Per device, per thunk: 1 for a kernel node that runs right after a
  // memcpy node of its lane, in a graph XLA records again before each launch
  // (DeviceModel::graph_node_gap_after_copy_us).
  std::vector<std::vector<uint8_t>> after_copy;
  // Per device: lane stream number -> the stream that launched the graph.
  std::vector<std::vector<std::pair<int, int>>> lanes;
  // Per graph launch (the ids of graph_of): the commands the host records
  // again before it (CommandBuffer::rerecorded_commands).
  std::vector<int64_t> rerecorded_commands;
  std::vector<int64_t> retraced_commands;  // of those, cuBLAS calls traced again
  std::vector<int64_t> blas_commands;      // cuBLAS commands outside dynamic-slice fusions
  int64_t graphs = 0;  // graph launches laid out
  int64_t nodes = 0;   // thunks that run as graph nodes
};

// `graphs` per device (in the order of `devices`; missing = none). A thunk
// named by two graphs, or out of range, is an error. Thunks of no graph keep
// their stream and order; each graph is laid out where its first node was.
Result<GraphProgram> lay_out_command_buffers(const std::vector<sched::DeviceProgram>& devices,
                                             const std::vector<std::vector<CommandBuffer>>& graphs,
                                             int concurrency);

// Per device, per thunk of `program`: 1 for a graph node right after a
// kernel XLA launches with programmatic dependent launch in its graph
// (hlo::Instruction::is_pdl_launch), which overlaps that kernel's tail.
std::vector<std::vector<uint8_t>> after_pdl_launch(const GraphProgram& program);

// The launch gap of each thunk of `program` by its role, in ns, for
// SimOptions::fixed_thunk_gap_ns (kNoGap for kStream when `stream_launch` is
// false: the model's kernel_launch_us); a node after a kernel launched with
// PDL takes graph_node_gap_after_pdl_launch_us, one after a memcpy node
// of a graph recorded again (GraphProgram::after_copy)
// graph_node_gap_after_copy_us.
std::vector<std::vector<int64_t>> role_gaps_ns(const GraphProgram& program, const DeviceModel& model,
                                               bool stream_launch);

// The wait after each cold launch's first node (SimOptions::cold_graph_wait),
// from DeviceModel::graph_cold_wait_*: per graph launch, by its node count.
// The wait holds back the nodes `modelled_gap` marks (per device, per thunk:
// those whose gap is the model's; null: every node). No launches (wait_ns
// empty) when the model has no wait.
ColdGraphWait cold_graph_wait(const GraphProgram& program, const DeviceModel& model,
                              const std::vector<std::vector<uint8_t>>* modelled_gap = nullptr);

// The host thread's cost of issuing each thunk of `program` (sim/engine.h,
// HostIssue): a kernel launched alone host_kernel_launch_us, a library call
// (cuBLAS) host_library_call_us, a dynamic-slice fusion (original indices in
// `dynamic_slices`, per device) host_dynamic_slice_us, a graph
// host_graph_launch_us plus its re-recording (graph_rerecord_us) at its first
// node and nothing for the others, event records and
// waits nothing. The host blocks before the thunks whose original index
// `syncs_before` lists (per device; a while loop without a known trip count,
// every trip), for host_sync_us after the main stream is done, having issued
// `launches_before_syncs` (per device, per sync; missing = 0) launches of the
// loop's condition at host_kernel_launch_us each before it. A thunk launched
// alone keeps the host `after_issue_ns` (per device, per original thunk;
// missing = 0) more after its issue: a cuDNN call's own host code between
// its first launch and its last, which the call's GPU span already shows.
HostIssue host_issue_of(const GraphProgram& program, const std::vector<sched::DeviceProgram>& original,
                        const DeviceModel& model, const std::vector<std::vector<uint32_t>>& syncs_before,
                        const std::vector<std::vector<uint32_t>>& dynamic_slices,
                        const std::vector<std::vector<int64_t>>& launches_before_syncs = {},
                        const std::vector<std::vector<int64_t>>& after_issue_ns = {});

// Maps a simulation of `program` back to the original program: correlations
// to original thunk indices, lane streams to the stream that launched the
// graph (CUPTI shows a graph's kernels on that stream).
void map_back(const GraphProgram& program, const std::vector<sched::DeviceProgram>& original, trace::Trace& trace);

}  // namespace sl::sim
