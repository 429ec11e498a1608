#include "core/sched/execution_streams.h"

#include <charconv>
#include <deque>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "core/sched/stream_assignment.h"
#include "core/sched/streams.h"

namespace sl::sched {
namespace {

using hlo::Opcode;

// `_xla_stream_annotation` as a number; "collective" (a scheduling hint) and
// anything else non-numeric ask for no particular stream.
std::optional<int> annotated_stream(const hlo::Instruction& instruction) {
  auto it = instruction.frontend_attributes.find("_xla_stream_annotation");
  if (it == instruction.frontend_attributes.end()) return std::nullopt;
  std::string_view text = it->second;
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 0 || value >= kCommStreamBase) {
    return std::nullopt;
  }
  return value;
}

// The stream an async-start asks for through operation_queue_id, or an
// annotation on its wrapped computation's root. In a module XLA scheduled,
// operation_queue_id is the scheduler's and does not pick the stream: the
// windowed einsum dumps' GEMMs with operation_queue_id 4 and 5 ran on
// computation_stream[0] and [1] (tests/corpus/jax/large/windowed_einsum).
std::optional<int> requested_compute_stream(const hlo::Module& module, const hlo::Instruction& start) {
  if (std::optional<int64_t> queue = start.operation_queue_id;
      !module.is_scheduled && queue && *queue > 0 && *queue < kCommStreamBase) {
    return static_cast<int>(*queue);
  }
  if (start.async_wrapped || start.called.empty()) return std::nullopt;
  const int callee = start.called[0];
  if (callee < 0 || callee >= static_cast<int>(module.computations.size())) return std::nullopt;
  const hlo::Computation& computation = module.computations[static_cast<size_t>(callee)];
  if (computation.root < 0) return std::nullopt;
  std::optional<int64_t> requested =
      computation.instructions[static_cast<size_t>(computation.root)].requested_stream();
  if (requested && *requested > 0 && *requested < kCommStreamBase) return static_cast<int>(*requested);
  return std::nullopt;
}

class RoundRobin {
 public:
  int next(bool communication) {
    if (communication) return kCommStreamBase + static_cast<int>(communication_++ % kXlaCommunicationStreams);
    return 1 + static_cast<int>(compute_++ % kXlaComputeStreams);
  }

 private:
  uint64_t compute_ = 0;
  uint64_t communication_ = 0;
};

}  // namespace

std::vector<int> post_order(const hlo::Computation& computation) {
  const auto& insts = computation.instructions;
  const int n = static_cast<int>(insts.size());
  std::vector<bool> used(static_cast<size_t>(n), false);
  for (const hlo::Instruction& inst : insts) {
    for (int operand : inst.operands) {
      if (operand >= 0 && operand < n) used[static_cast<size_t>(operand)] = true;
    }
    for (int predecessor : inst.control_predecessors) {
      if (predecessor >= 0 && predecessor < n) used[static_cast<size_t>(predecessor)] = true;
    }
  }
  enum : uint8_t { kUnseen, kVisiting, kDone };
  std::vector<uint8_t> state(static_cast<size_t>(n), kUnseen);
  std::vector<int> order;
  order.reserve(static_cast<size_t>(n));
  std::vector<int> stack;
  for (int root = 0; root < n; ++root) {
    if (used[static_cast<size_t>(root)]) continue;
    stack.push_back(root);
    while (!stack.empty()) {
      const int current = stack.back();
      uint8_t& s = state[static_cast<size_t>(current)];
      if (s != kUnseen) {
        stack.pop_back();
        if (s == kVisiting) {
          s = kDone;
          order.push_back(current);
        }
        continue;
      }
      s = kVisiting;
      // Pushed in reverse so the first operand is visited first.
      const hlo::Instruction& inst = insts[static_cast<size_t>(current)];
      for (auto it = inst.control_predecessors.rbegin(); it != inst.control_predecessors.rend(); ++it) {
        if (*it >= 0 && *it < n && state[static_cast<size_t>(*it)] == kUnseen) stack.push_back(*it);
      }
      for (auto it = inst.operands.rbegin(); it != inst.operands.rend(); ++it) {
        if (*it >= 0 && *it < n && state[static_cast<size_t>(*it)] == kUnseen) stack.push_back(*it);
      }
    }
  }
  // A cycle (rejected by the verifier) leaves instructions out: append them in text order.
  for (int i = 0; i < n && static_cast<int>(order.size()) < n; ++i) {
    if (state[static_cast<size_t>(i)] != kDone) order.push_back(i);
  }
  return order;
}

std::unordered_map<const hlo::Instruction*, int> assign_execution_streams(const hlo::Module& module) {
  std::unordered_map<const hlo::Instruction*, int> streams;
  if (module.entry < 0 || module.entry >= static_cast<int>(module.computations.size())) return streams;
  RoundRobin round_robin;
  std::deque<int> queue{module.entry};
  std::unordered_set<int> queued{module.entry};
  while (!queue.empty()) {
    const hlo::Computation& computation = module.computations[static_cast<size_t>(queue.front())];
    queue.pop_front();
    for (int index : post_order(computation)) {
      const hlo::Instruction& inst = computation.instructions[static_cast<size_t>(index)];
      if (inst.opcode == Opcode::kAsyncStart) {
        const bool communication = wraps_collective(module, inst);
        std::optional<int> stream = annotated_stream(inst);
        if (stream && communication) stream = kCommStreamBase + *stream;
        if (!stream && !communication) stream = requested_compute_stream(module, inst);
        streams[&inst] = stream ? *stream : round_robin.next(communication);
        continue;
      }
      if (inst.opcode == Opcode::kCall || inst.opcode == Opcode::kWhile || inst.opcode == Opcode::kConditional) {
        for (int callee : inst.called) {
          if (callee >= 0 && callee < static_cast<int>(module.computations.size()) && queued.insert(callee).second) {
            queue.push_back(callee);
          }
        }
      }
    }
  }
  return streams;
}

}  // namespace sl::sched
