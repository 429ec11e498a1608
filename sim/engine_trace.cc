// Trace emission: event names and kinds, instruction ids, events and their
// dependency edges, and where a thunk is for error messages.

#include "sim/engine_state.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/exec/event_kind.h"
#include "core/xla/launch_plan.h"

namespace sl::sim::engine_internal {

std::string Engine::where(int device, int stream, uint32_t thunk) const {
  const Thunk& t = programs_[static_cast<size_t>(device)].thunks[thunk];
  return fmt::format("device {} stream {} thunk {}{}", programs_[static_cast<size_t>(device)].device,
                     devices_[static_cast<size_t>(device)].streams[static_cast<size_t>(stream)].number, thunk,
                     t.attributed_name.empty() ? "" : fmt::format(" ({})", t.attributed_name));
}

uint32_t Engine::instruction_id(const Thunk& thunk) {
  std::string_view text = thunk.attributed_name;
  if (text.empty() && thunk.instruction) text = thunk.instruction->name;
  auto [it, inserted] = instruction_ids_.try_emplace(text, 0);
  if (inserted) it->second = trace_.strings.intern(text);
  return it->second;
}

std::pair<uint32_t, EventKind> Engine::name_and_kind(const Thunk& thunk) {
  if (thunk.instruction) {
    auto [it, inserted] = instruction_names_.try_emplace(thunk.instruction);
    if (inserted) {
      const hlo::Instruction& in = *thunk.instruction;
      hlo::Opcode op = in.async_wrapped.value_or(in.opcode);
      // A fusion's kernel is named after the fusion, as XLA names it (and as
      // the cuda backend and captures show it), so each fusion is a kernel
      // of its own in statistics, not one "fusion" row.
      const std::string kernel = op == hlo::Opcode::kFusion ? xla::sanitized_kernel_name(in.name) : std::string();
      std::string_view name = !kernel.empty() ? std::string_view(kernel)
                              : op == hlo::Opcode::kCustomCall && !in.custom_call_target.empty()
                                  ? std::string_view(in.custom_call_target)
                                  : hlo::opcode_name(op);
      EventKind kind = exec::event_kind_of(in);
      // The thunk kind is authoritative when the instruction says less (e.g. a wrapper).
      if (thunk.kind == ThunkKind::kGemm) kind = EventKind::kGemm;
      if (thunk.kind == ThunkKind::kCollective) kind = EventKind::kCollective;
      it->second = {trace_.strings.intern(name), kind};
    }
    return it->second;
  }
  // Hand-built thunks without an instruction: named after their kind.
  switch (thunk.kind) {
    case ThunkKind::kGemm: return {gemm_name_, EventKind::kGemm};
    case ThunkKind::kCollective:
      return {trace_.strings.intern(hlo::opcode_name(thunk.collective.op)), EventKind::kCollective};
    default: return {kernel_name_, EventKind::kOther};
  }
}

uint32_t Engine::emit(int device, int stream, const Thunk& thunk, uint32_t index, EventKind kind, uint32_t name,
                      double start) {
  StreamState& s = devices_[static_cast<size_t>(device)].streams[static_cast<size_t>(stream)];
  trace::Event e;
  e.device = static_cast<int32_t>(programs_[static_cast<size_t>(device)].device);
  e.stream = s.number;
  e.stream_kind = sched::stream_kind(s.number);
  e.kind = kind;
  e.name = name;
  e.instruction = instruction_id(thunk);
  e.start_ns = to_ns(start);
  e.end_ns = e.start_ns;
  e.correlation = index;
  if (kind != EventKind::kWait) {
    e.bytes = thunk.kind == ThunkKind::kCollective ? std::max(thunk.collective.bytes_in, thunk.collective.bytes_out)
                                                   : thunk.bytes_accessed;
    e.flops = thunk.flops;
  }
  auto id = static_cast<uint32_t>(trace_.events.size());
  trace_.events.push_back(e);
  for (uint32_t from : s.pending_from) trace_.dependencies.push_back({from, id});
  s.pending_from.clear();
  s.last_event = id;
  return id;
}

}  // namespace sl::sim::engine_internal
