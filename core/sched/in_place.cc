#include "core/sched/in_place.h"

#include <numeric>
#include <vector>

namespace sl::sched::detail {
namespace {

bool is_dynamic_update_slice(const Thunk& t) {
  return t.kind == ThunkKind::kKernel && t.instruction != nullptr &&
         t.instruction->opcode == hlo::Opcode::kDynamicUpdateSlice;
}

}  // namespace

void alias_in_place_updates(FlatProgram& flat) {
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
    if (!is_dynamic_update_slice(t) || b.operands < 2 || b.results != 1) continue;
    const int32_t operand = flat.buffer_ids[b.first];
    const int32_t result = flat.buffer_ids[b.first + b.operands];
    if (operand < 0 || result < 0 || operand == result || pinned[static_cast<size_t>(operand)]) continue;
    LogicalBuffer& from = flat.buffers[static_cast<size_t>(operand)];
    LogicalBuffer& into = flat.buffers[static_cast<size_t>(result)];
    if (from.end != static_cast<int64_t>(p) || from.slice.size != into.slice.size) continue;
    bool read_twice = false;
    for (uint32_t k = 1; k < b.operands; ++k) read_twice |= flat.buffer_ids[b.first + k] == operand;
    if (read_twice) continue;

    from.end = into.end;
    pinned[static_cast<size_t>(operand)] = pinned[static_cast<size_t>(result)];
    into.slice.size = 0;
    into.start = into.end = static_cast<int64_t>(p);
    renamed[static_cast<size_t>(result)] = operand;
    flat.buffer_ids[b.first + b.operands] = operand;
    // Reads the update and the start indices (already counted) and writes the
    // update; the rest of the operand stays where it is.
    const int64_t update = flat.buffers[static_cast<size_t>(flat.buffer_ids[b.first + 1])].slice.size;
    t.bytes_accessed = t.bytes_accessed - 2 * from.slice.size + update;
    any = true;
  }
  if (!any) return;
  for (int32_t& id : flat.outputs) id = resolve(id);
}

}  // namespace sl::sched::detail
