#include "core/sched/command_buffer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

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
  std::set<int> streams;
  for (uint32_t i : buffer.thunks) {
    const Thunk& t = thunks[i];
    if (t.kind == ThunkKind::kCollective) {
      return fmt::format("node '{}' is a collective (NCCL is not captured into graphs)", t.attributed_name);
    }
    if (t.kind != ThunkKind::kKernel && t.kind != ThunkKind::kGemm) return fmt::format("thunk {} is not a launch", i);
    streams.insert(t.stream);
  }
  // Launched where its first node is, after every node stream's earlier
  // work, the graph runs ahead of what those streams would have done between
  // its nodes; their later work waits for it. A record there only fires
  // later; a wait is the graph's own ordering only when its event was
  // recorded there on a node stream.
  std::map<int, uint32_t> recorded;  // event -> where it was last recorded
  for (uint32_t i = first + 1; i < last; ++i) {
    const Thunk& t = thunks[i];
    if (t.kind == ThunkKind::kRecordEvent) recorded[t.event] = i;
    if (node[i] || streams.count(t.stream) == 0 || t.kind == ThunkKind::kRecordEvent) continue;
    if (t.kind == ThunkKind::kWaitEvent) {
      auto r = recorded.find(t.event);
      if (r != recorded.end() && streams.count(thunks[r->second].stream) > 0) continue;
      return fmt::format("stream {} waits for event {}, recorded outside the graph, between its first and last node",
                         t.stream, t.event);
    }
    return fmt::format("'{}' runs on stream {} between its first and last node but is no node", t.attributed_name,
                       t.stream);
  }
  return "";
}

}  // namespace sl::sched
