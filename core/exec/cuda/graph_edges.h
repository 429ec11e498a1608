#pragma once
// The edges of a command buffer's CUDA graph. XLA's DAG (prev=/next=) is
// right for XLA's buffer assignment; streamlens assigns buffers itself and
// reuses memory in program order, so a node may also have to wait for an
// earlier node that reads what it overwrites, or writes what it touches.
// Pure logic (no CUDA): nodes in program order, XLA's edges that agree with
// it, and the hazards of the thunks' buffer slices.

#include <cstdint>
#include <functional>
#include <vector>

#include "core/sched/command_buffer.h"
#include "core/sched/thunk.h"

namespace sl::exec::cuda {

struct GraphEdges {
  // The nodes (indices into CommandBuffer::thunks) in program order.
  std::vector<uint32_t> order;
  // Per position of `order`: the earlier positions it waits for, ascending.
  std::vector<std::vector<int>> deps;
  int64_t xla_edges = 0;       // XLA's edges kept
  int64_t dropped_edges = 0;   // XLA's edges against program order, dropped
  int64_t hazard_edges = 0;    // edges added for the buffers
};

// `shared_state(thunk)`: running it uses device state every such thunk
// shares (the fallback GEMM workspace, a fusion's temporaries): those run
// one after another in program order, as on a stream. Valid `buffer`s only
// (thunk indices in range, deps to earlier nodes).
GraphEdges graph_edges(const sched::DeviceProgram& program, const sched::CommandBuffer& buffer,
                       const std::function<bool(const sched::Thunk&)>& shared_state);

}  // namespace sl::exec::cuda
