#pragma once
// A command buffer (CUDA graph) as XLA executes one: some of a device's
// thunks launched together as the nodes of one graph, with the DAG between
// them instead of stream order. Filled from XLA's thunk dump
// (app/common/command_buffer_setup.h); laid out as lanes by the simulator
// (sim/command_buffers.h) and captured into a CUDA graph by the cuda backend.

#include <cstdint>
#include <string>
#include <vector>

#include "core/sched/thunk.h"

namespace sl::sched {

// One execution of a graph on one device: its nodes as thunk indices of the
// device's program, in the order the graph lists them, and per node the
// nodes (indices into `thunks`) it waits for; edges to later nodes are ignored.
struct CommandBuffer {
  std::vector<uint32_t> thunks;
  std::vector<std::vector<int>> deps;
  // Per node: 1 for a memcpy command (XLA's kCopy, as a scan's dynamic-slice
  // copy); may be empty (none is).
  std::vector<uint8_t> copies;
  // Commands XLA's host records again before each launch (0: launched as
  // recorded; xla::LaunchPlan::rerecorded_commands).
  int64_t rerecorded_commands = 0;
  int64_t retraced_commands = 0;  // of those, cuBLAS calls traced again (xla::LaunchPlan)
  int64_t blas_commands = 0;      // cuBLAS commands outside dynamic-slice fusions (xla::LaunchPlan)
};

// Why `buffer` cannot run as one CUDA graph launched where its first node is
// in program order, on that node's stream, after every node stream's earlier
// work and before their later work (or "" when it can): a node out of
// range, named twice or by an earlier graph (`taken`, per thunk: >= 0 for a
// node of one; may be null), a collective (NCCL is not captured), or, on a
// node stream between its first and last node, a thunk that is no node or
// a wait for an event not recorded there on a node stream (the graph would
// run ahead of it).
std::string command_buffer_refusal(const DeviceProgram& program, const CommandBuffer& buffer,
                                   const std::vector<int32_t>* taken);

}  // namespace sl::sched
