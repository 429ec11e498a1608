#include "core/sched/command_buffer.h"

#include <fmt/format.h>

#include <algorithm>

namespace sl::sched {

std::string command_buffer_refusal(const DeviceProgram& program, const CommandBuffer& buffer,
                                   const std::vector<int32_t>* taken) {
  const auto& thunks = program.thunks;
  if (buffer.thunks.empty()) return "it has no nodes";
  if (buffer.deps.size() != buffer.thunks.size()) return "its DAG does not list every node";
  std::vector<bool> node(thunks.size(), false);
  for (size_t k = 0; k < buffer.thunks.size(); ++k) {
    const uint32_t i = buffer.thunks[k];
    if (i >= thunks.size()) return fmt::format("node {} names thunk {}, past the program's {}", k, i, thunks.size());
    if (node[i]) return fmt::format("thunk {} is a node twice", i);
    if (taken != nullptr && i < taken->size() && (*taken)[i] >= 0) {
      return fmt::format("thunk {} is a node of another graph", i);
    }
    node[i] = true;
    for (int d : buffer.deps[k]) {
      if (d < 0 || static_cast<size_t>(d) >= k) return fmt::format("node {} waits for node {}, not an earlier one", k, d);
    }
  }
  const uint32_t first = *std::min_element(buffer.thunks.begin(), buffer.thunks.end());
  const uint32_t last = *std::max_element(buffer.thunks.begin(), buffer.thunks.end());
  const int stream = thunks[first].stream;
  for (uint32_t i : buffer.thunks) {
    const Thunk& t = thunks[i];
    if (t.kind == ThunkKind::kCollective) {
      return fmt::format("node '{}' is a collective (NCCL is not captured into graphs)", t.attributed_name);
    }
    if (t.kind != ThunkKind::kKernel && t.kind != ThunkKind::kGemm) return fmt::format("thunk {} is not a launch", i);
    if (t.stream != stream) {
      return fmt::format("node '{}' is on stream {}, the graph would be launched on stream {}", t.attributed_name,
                         t.stream, stream);
    }
  }
  // Launched at its first node, the graph runs ahead of whatever the stream
  // would have done between its nodes. A record there only fires later.
  for (uint32_t i = first + 1; i < last; ++i) {
    const Thunk& t = thunks[i];
    if (node[i] || t.stream != stream || t.kind == ThunkKind::kRecordEvent) continue;
    if (t.kind == ThunkKind::kWaitEvent) {
      return fmt::format("stream {} waits for event {} between its first and last node", stream, t.event);
    }
    return fmt::format("'{}' runs on stream {} between its first and last node but is no node", t.attributed_name,
                       stream);
  }
  return "";
}

}  // namespace sl::sched
