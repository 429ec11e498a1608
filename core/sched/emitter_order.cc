// Emission order of a computation's instructions, and the per-computation
// facts it needs (first users, the done of each start).

#include "core/sched/emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>

namespace sl::sched::detail {

using hlo::Opcode;

std::vector<Emitter::EmitStep> Emitter::emission_order(const hlo::Computation& computation, int stream) const {
  // An instruction that runs on another stream through an implicit async pair
  // (operation_queue_id, stream annotation or a user's move) starts as soon as
  // its operands exist, not at its text position: otherwise its start would
  // wait for all earlier work on the parent stream, and moving a GEMM to
  // another stream could never overlap it with the work written before it.
  const int count = static_cast<int>(computation.instructions.size());
  std::vector<std::vector<int>> hoisted_after(static_cast<size_t>(count) + 1);  // slot 0 = before everything
  std::vector<bool> hoisted(static_cast<size_t>(count), false);
  for (int i = 0; i < count; ++i) {
    const hlo::Instruction& instruction = computation.instructions[static_cast<size_t>(i)];
    switch (instruction.opcode) {
      case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple: case Opcode::kGetTupleElement:
      case Opcode::kBitcast: case Opcode::kReshape: case Opcode::kAsyncStart: case Opcode::kAsyncUpdate:
      case Opcode::kAsyncDone:
        continue;
      default:
        break;
    }
    // A scheduled module's text order is XLA's issue order: nothing moves.
    if (module_.is_scheduled) break;
    std::optional<int> target = policy_.stream_of(instruction);
    if (!target || *target == stream) continue;
    int last_operand = -1;
    for (int operand : instruction.operands) last_operand = std::max(last_operand, operand);
    for (int predecessor : instruction.control_predecessors) last_operand = std::max(last_operand, predecessor);
    if (last_operand + 1 >= i) continue;  // already right after its operands
    hoisted[static_cast<size_t>(i)] = true;
    hoisted_after[static_cast<size_t>(last_operand + 1)].push_back(i);
  }
  std::vector<EmitStep> order;
  order.reserve(static_cast<size_t>(count));
  for (int slot = 0; slot <= count; ++slot) {
    // slot k holds what goes right after instruction k-1 (operands precede it).
    if (slot > 0 && !hoisted[static_cast<size_t>(slot - 1)]) order.push_back({slot - 1, false});
    for (int i : hoisted_after[static_cast<size_t>(slot)]) order.push_back({i, true});
  }
  return after_control_predecessors(computation, std::move(order));
}

std::vector<Emitter::EmitStep> Emitter::after_control_predecessors(const hlo::Computation& computation,
                                                                   std::vector<EmitStep> order) {
  // Control predecessors written after their successor (an unscheduled module)
  // would be issued late: a stable topological order keeps everything else in
  // place and never issues an instruction before its predecessors.
  const size_t n = computation.instructions.size();
  bool any = false;
  for (const hlo::Instruction& instruction : computation.instructions) any = any || !instruction.control_predecessors.empty();
  if (!any || order.size() != n) return order;
  std::vector<size_t> rank(n, 0);
  for (size_t k = 0; k < order.size(); ++k) rank[static_cast<size_t>(order[k].index)] = k;
  std::vector<std::vector<int>> successors(n);
  std::vector<int> waiting(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const hlo::Instruction& instruction = computation.instructions[i];
    auto edge = [&](int from) {
      if (from < 0 || static_cast<size_t>(from) >= n || static_cast<size_t>(from) == i) return;
      successors[static_cast<size_t>(from)].push_back(static_cast<int>(i));
      ++waiting[i];
    };
    for (int operand : instruction.operands) edge(operand);
    for (int predecessor : instruction.control_predecessors) edge(predecessor);
  }
  auto later = [&](int a, int b) { return rank[static_cast<size_t>(a)] > rank[static_cast<size_t>(b)]; };
  std::priority_queue<int, std::vector<int>, decltype(later)> ready(later);
  for (size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push(static_cast<int>(i));
  }
  std::vector<EmitStep> sorted;
  sorted.reserve(n);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    sorted.push_back(order[rank[static_cast<size_t>(i)]]);
    for (int next : successors[static_cast<size_t>(i)]) {
      if (--waiting[static_cast<size_t>(next)] == 0) ready.push(next);
    }
  }
  // A cycle (the verifier rejects it) leaves the text order as it was.
  return sorted.size() == n ? sorted : order;
}

const Emitter::ComputationInfo& Emitter::info(const hlo::Computation& computation) {
  auto [it, inserted] = infos_.try_emplace(&computation);
  if (!inserted) return it->second;
  ComputationInfo& info = it->second;
  const size_t n = computation.instructions.size();
  info.first_user.assign(n, -1);
  info.done_of.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const hlo::Instruction& instruction = computation.instructions[i];
    // Control successors count as users: they wait for the work's done too.
    for (const auto* list : {&instruction.operands, &instruction.control_predecessors}) {
      for (int operand : *list) {
        if (operand < 0 || static_cast<size_t>(operand) >= n) continue;
        int& first = info.first_user[static_cast<size_t>(operand)];
        if (first < 0 || first > static_cast<int>(i)) first = static_cast<int>(i);
      }
    }
    if (instruction.opcode == Opcode::kAsyncDone && !instruction.operands.empty()) {
      int start = instruction.operands[0];
      while (start >= 0 && computation.instructions[static_cast<size_t>(start)].opcode == Opcode::kAsyncUpdate) {
        const auto& update = computation.instructions[static_cast<size_t>(start)];
        start = update.operands.empty() ? -1 : update.operands[0];
      }
      if (start >= 0) info.done_of[static_cast<size_t>(start)] = static_cast<int>(i);
    }
  }
  return info;
}

}  // namespace sl::sched::detail
