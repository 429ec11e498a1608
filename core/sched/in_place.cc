#include "core/sched/in_place.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <vector>

namespace sl::sched::detail {
namespace {

// An update written where its operand lies: which thunk operand becomes
// which result, and how many bytes the update itself writes (-1: its update
// operand's size).
struct InPlaceUpdate {
  uint32_t operand = 0;
  uint32_t result = 0;
  int64_t written = 0;
};

// A fused dynamic-update-slice or single-operand scatter (`k` in `c`) updating
// a fused parameter in place. The parameter must have no other reader, so
// every element is read and written by the update alone.
std::optional<InPlaceUpdate> fused_update(const hlo::Computation& c, int k, uint32_t result) {
  const hlo::Instruction& update = c.instructions.at(static_cast<size_t>(k));
  const bool dus = update.opcode == hlo::Opcode::kDynamicUpdateSlice;
  const bool scatter = update.opcode == hlo::Opcode::kScatter && update.operands.size() == 3;
  if ((!dus && !scatter) || update.operands.size() < 2) return std::nullopt;
  const int source = update.operands[0];
  const hlo::Instruction& parameter = c.instructions.at(static_cast<size_t>(source));
  if (parameter.opcode != hlo::Opcode::kParameter || parameter.parameter_number < 0) return std::nullopt;
  for (size_t u = 0; u < c.instructions.size(); ++u) {
    const hlo::Instruction& user = c.instructions[u];
    for (size_t o = 0; o < user.operands.size(); ++o) {
      if (user.operands[o] == source && (static_cast<int>(u) != k || o != 0)) return std::nullopt;
    }
  }
  const hlo::Instruction& written = c.instructions.at(static_cast<size_t>(update.operands[dus ? 1 : 2]));
  return InPlaceUpdate{static_cast<uint32_t>(parameter.parameter_number), result, written.shape.byte_size()};
}

// XLA's in-place pairs (HloDataflowAnalysis::GetInPlaceInputOutputPairs):
// dynamic-update-slice operand 0, a single-operand scatter's operand 0, and
// a fusion whose root, or an element of whose root tuple, is one of those
// reading a fused parameter directly (a dynamic-slice fusion returns its
// updated stack beside its cuBLAS call's workspace).
std::vector<InPlaceUpdate> in_place_updates(const hlo::Module& module, const Thunk& t) {
  if (t.kind != ThunkKind::kKernel || t.instruction == nullptr) return {};
  const hlo::Instruction& inst = *t.instruction;
  const bool dus = inst.opcode == hlo::Opcode::kDynamicUpdateSlice;
  const bool scatter = inst.opcode == hlo::Opcode::kScatter && inst.operands.size() == 3;
  if (dus || scatter) return {InPlaceUpdate{0, 0, -1}};
  if (inst.opcode != hlo::Opcode::kFusion || inst.called.empty()) return {};
  const hlo::Computation& c = module.computations.at(static_cast<size_t>(inst.called[0]));
  if (c.root < 0) return {};
  const hlo::Instruction& root = c.instructions.at(static_cast<size_t>(c.root));
  std::vector<InPlaceUpdate> out;
  if (root.opcode != hlo::Opcode::kTuple) {
    if (auto u = fused_update(c, c.root, 0)) out.push_back(*u);
    return out;
  }
  uint32_t leaf = 0;  // an element may be a tuple: results are the root's leaves
  for (int element : root.operands) {
    const hlo::Shape& shape = c.instructions.at(static_cast<size_t>(element)).shape;
    if (shape.is_array()) {
      if (auto u = fused_update(c, element, leaf)) out.push_back(*u);
    }
    leaf += static_cast<uint32_t>(shape.leaves().size());
  }
  return out;
}

}  // namespace

void alias_in_place_updates(const hlo::Module& module, FlatProgram& flat) {
  std::vector<bool> pinned(flat.buffers.size(), false);  // must keep their memory to themselves
  auto pin = [&](int32_t id) {
    if (id >= 0) pinned[static_cast<size_t>(id)] = true;
  };
  for (const Leaves& parameter : flat.parameters) for (int32_t id : parameter) pin(id);
  for (const auto& [instruction, id] : flat.constants) pin(id);
  for (int32_t id : flat.outputs) pin(id);

  // renamed[b]: the buffer b was merged into (b itself if none); chains of
  // updates (a loop's accumulator) end in the first one.
  std::vector<int32_t> renamed(flat.buffers.size());
  std::iota(renamed.begin(), renamed.end(), 0);
  auto resolve = [&](int32_t id) {
    if (id < 0) return id;
    while (renamed[static_cast<size_t>(id)] != id) id = renamed[static_cast<size_t>(id)];
    return id;
  };

  bool any = false;
  for (size_t p = 0; p < flat.thunks.size(); ++p) {
    const ThunkBuffers& b = flat.buffers_of[p];
    for (uint32_t k = 0; k < b.operands + b.results; ++k) {
      int32_t& id = flat.buffer_ids[b.first + k];
      id = resolve(id);
    }
    Thunk& t = flat.thunks[p];
    for (const InPlaceUpdate& update : in_place_updates(module, t)) {
      if (update.operand >= b.operands || update.result >= b.results) continue;
      const uint32_t result_slot = b.first + b.operands + update.result;
      const int32_t operand = flat.buffer_ids[b.first + update.operand];
      const int32_t result = flat.buffer_ids[result_slot];
      if (operand < 0 || result < 0 || operand == result || pinned[static_cast<size_t>(operand)]) continue;
      LogicalBuffer& from = flat.buffers[static_cast<size_t>(operand)];
      LogicalBuffer& into = flat.buffers[static_cast<size_t>(result)];
      if (from.end != static_cast<int64_t>(p) || from.slice.size != into.slice.size) continue;
      bool read_twice = false;
      for (uint32_t k = 0; k < b.operands; ++k) {
        read_twice |= k != update.operand && flat.buffer_ids[b.first + k] == operand;
      }
      if (read_twice) continue;

      from.end = into.end;
      pinned[static_cast<size_t>(operand)] = pinned[static_cast<size_t>(result)];
      into.slice.size = 0;
      into.start = into.end = static_cast<int64_t>(p);
      renamed[static_cast<size_t>(result)] = operand;
      flat.buffer_ids[result_slot] = operand;
      // Reads the other operands (already counted) and writes the update; the
      // rest of the operand stays where it is. A plain DUS or scatter writes
      // its update operand (operand 1 or 2).
      int64_t written = update.written;
      if (written < 0) {
        const uint32_t u = t.instruction->opcode == hlo::Opcode::kScatter ? 2 : 1;
        written = u < b.operands ? flat.buffers[static_cast<size_t>(flat.buffer_ids[b.first + u])].slice.size : 0;
      }
      t.bytes_accessed = std::max<int64_t>(0, t.bytes_accessed - 2 * from.slice.size + written);
      any = true;
    }
  }
  if (!any) return;
  for (int32_t& id : flat.outputs) id = resolve(id);
}

}  // namespace sl::sched::detail
