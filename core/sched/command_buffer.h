#pragma once
// A command buffer (CUDA graph) as XLA executes one: some of a device's
// thunks launched together as the nodes of one graph, with the DAG between
// them instead of stream order. Filled from XLA's thunk dump
// (app/cli/command_buffer_setup.h); laid out as lanes by the simulator
// (sim/command_buffers.h) and captured into a CUDA graph by the cuda backend.

#include <cstdint>
#include <vector>

namespace sl::sched {

// One execution of a graph on one device: its nodes as thunk indices of the
// device's program, in the order the graph lists them, and per node the
// nodes (indices into `thunks`) it waits for; edges to later nodes are ignored.
struct CommandBuffer {
  std::vector<uint32_t> thunks;
  std::vector<std::vector<int>> deps;
};

}  // namespace sl::sched
