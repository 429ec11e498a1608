// The emitter's driver: run() over the entry, each computation's
// instructions in emission order, the ops that only alias buffers, and the
// thunk estimate that sizes the reservations.

#include "core/sched/emitter.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/common/huge_pages.h"

namespace sl::sched::detail {

using hlo::Opcode;

int64_t leaf_count(const hlo::Shape& shape) {
  if (!shape.is_tuple()) return 1;
  int64_t n = 0;
  for (const hlo::Shape& element : shape.elements) n += leaf_count(element);
  return n;
}

Result<FlatProgram> Emitter::run() {
  if (module_.entry < 0 || module_.entry >= static_cast<int>(module_.computations.size())) {
    return invalid_input(fmt::format("module '{}' has no entry computation", module_.name));
  }
  const hlo::Computation& entry = module_.entry_computation();
  std::vector<Leaves> arguments(entry.parameters.size());
  for (size_t p = 0; p < entry.parameters.size(); ++p) {
    const int index = entry.parameters[p];
    if (index < 0 || index >= static_cast<int>(entry.instructions.size())) {
      return invalid_input(fmt::format("entry computation '{}' has no parameter({})", entry.name, p));
    }
    const hlo::Instruction& parameter = entry.instructions[static_cast<size_t>(index)];
    arguments[p] = new_leaves(parameter.shape, &parameter, 0, /*whole_program=*/true);
  }
  out_.parameters = arguments;

  // Reserved once: growing vectors of ~10^5 thunks by doubling touched about
  // twice their final size in fresh pages, and page faults dominated lowering.
  // Capacity beyond what is used costs address space only. Huge pages: the
  // faults themselves were most of the rest.
  const size_t expected = std::min(estimate_thunks(entry, 0), kMaxReservedThunks);
  reserve_huge(out_.thunks, expected);
  reserve_huge(out_.buffers_of, expected);
  reserve_huge(out_.buffer_ids, expected * 2);
  reserve_huge(out_.buffers, expected + out_.buffers.size());
  size_t instructions = 0;
  for (const hlo::Computation& computation : module_.computations) instructions += computation.instructions.size();
  out_.streams.reserve(instructions);
  listed_.reserve(instructions);
  occurrences_.reserve(expected);

  Leaves root;
  SL_RETURN_IF_ERROR(emit_computation(entry, kMainStream, nullptr, arguments, &root));
  out_.outputs = root;

  const int64_t last = std::max<int64_t>(0, static_cast<int64_t>(out_.thunks.size()) - 1);
  for (int32_t id : whole_program_) {
    out_.buffers[static_cast<size_t>(id)].start = 0;
    out_.buffers[static_cast<size_t>(id)].end = last;
  }
  for (int32_t id : root) {
    if (id >= 0) out_.buffers[static_cast<size_t>(id)].end = last;
  }
  return std::move(out_);
}

Status Emitter::emit_computation(const hlo::Computation& computation, int stream, const std::string* attribution,
                                 const std::vector<Leaves>& arguments, Leaves* result) {
  if (depth_ >= kMaxCallDepth) {
    return invalid_input(fmt::format("calls nest deeper than {} levels at computation '{}' (recursion?)",
                                     kMaxCallDepth, computation.name));
  }
  ++depth_;
  std::vector<Leaves> env(computation.instructions.size());
  std::map<int, std::vector<PendingDone>> pending;  // instruction index -> dones emitted before it
  std::unordered_map<int, AsyncState> async;
  auto flush = [&](int upto) {
    while (!pending.empty() && pending.begin()->first <= upto) {
      for (PendingDone& done : pending.begin()->second) {
        int64_t position = push_event_thunk(ThunkKind::kWaitEvent, done.stream, done.event, done.name);
        close_region(done.region, position);
      }
      pending.erase(pending.begin());
    }
  };

  const int count = static_cast<int>(computation.instructions.size());
  for (const EmitStep& step : emission_order(computation, stream)) {
    const int i = step.index;
    if (step.hoisted) {
      // Only the dones this instruction itself waits for; later ones stay put.
      auto own = pending.find(i);
      if (own != pending.end()) {
        for (PendingDone& done : own->second) {
          int64_t position = push_event_thunk(ThunkKind::kWaitEvent, done.stream, done.event, done.name);
          close_region(done.region, position);
        }
        pending.erase(own);
      }
    } else {
      flush(i);
    }
    const hlo::Instruction& instruction = computation.instructions[static_cast<size_t>(i)];
    // wait_on_operation_queues: the work moved to those streams finishes first.
    if (!instruction.wait_on_operation_queues.empty()) {
      for (auto& [at, dones] : pending) {
        for (auto it = dones.begin(); it != dones.end();) {
          const auto& queues = instruction.wait_on_operation_queues;
          if (std::find(queues.begin(), queues.end(), it->async_stream) == queues.end()) {
            ++it;
            continue;
          }
          int64_t position = push_event_thunk(ThunkKind::kWaitEvent, it->stream, it->event, it->name);
          close_region(it->region, position);
          it = dones.erase(it);
        }
      }
    }
    if (instruction.opcode == Opcode::kParameter) {
      const int64_t number = instruction.parameter_number;
      if (number < 0 || number >= static_cast<int64_t>(arguments.size())) {
        --depth_;
        return invalid_input(fmt::format("'{}': parameter({}) of computation '{}' has no argument ({} given)",
                                         instruction.name, number, computation.name, arguments.size()));
      }
      env[static_cast<size_t>(i)] = arguments[static_cast<size_t>(number)];
      list_stream(instruction, stream);
      continue;
    }
    Status status = emit_instruction(computation, i, stream, attribution, env, pending, async);
    if (!status.is_ok()) {
      --depth_;
      // Name the innermost instruction's place (a call nesting too deep, say).
      const hlo::Instruction& at = computation.instructions[static_cast<size_t>(i)];
      if (status.message().find(": error: ") != std::string::npos || at.loc.line <= 0) return status;
      return Status(status.code(), fmt::format("{}:{}:{}: error: {}",
                                               module_.file_name.empty() ? "<program>" : module_.file_name,
                                               at.loc.line, at.loc.col, status.message()));
    }
  }
  flush(count);  // implicit dones without users: at the end of the computation
  const int root = computation.root >= 0 ? computation.root : count - 1;
  *result = root >= 0 ? env[static_cast<size_t>(root)] : Leaves{};
  --depth_;
  return ok_status();
}

Status Emitter::emit_instruction(const hlo::Computation& computation, int index, int stream,
                                 const std::string* attribution, std::vector<Leaves>& env,
                                 std::map<int, std::vector<PendingDone>>& pending,
                                 std::unordered_map<int, AsyncState>& async) {
  const hlo::Instruction& instruction = computation.instructions[static_cast<size_t>(index)];
  Leaves& value = env[static_cast<size_t>(index)];
  auto operand = [&](size_t k) -> const Leaves& { return env[static_cast<size_t>(instruction.operands[k])]; };
  const bool has_operand = !instruction.operands.empty();

  switch (instruction.opcode) {
    case Opcode::kConstant: {
      auto [it, inserted] = constant_buffers_.emplace(&instruction, -1);
      if (inserted) {
        Leaves leaves = new_leaves(instruction.shape, &instruction, 0, /*whole_program=*/true);
        it->second = leaves.empty() ? -1 : leaves[0];
        if (it->second >= 0) out_.constants.emplace_back(&instruction, it->second);
      }
      value = {it->second};
      list_stream(instruction, stream);
      return ok_status();
    }
    case Opcode::kTuple:
      for (size_t k = 0; k < instruction.operands.size(); ++k) append(value, operand(k));
      list_stream(instruction, stream);
      return ok_status();
    case Opcode::kGetTupleElement: {
      if (!has_operand) return invalid_input(fmt::format("'{}': get-tuple-element needs an operand", instruction.name));
      const hlo::Shape& tuple = computation.instructions[static_cast<size_t>(instruction.operands[0])].shape;
      const int64_t element = instruction.tuple_index;
      if (!tuple.is_tuple() || element < 0 || element >= static_cast<int64_t>(tuple.elements.size())) {
        return invalid_input(fmt::format("'{}': tuple index {} out of range", instruction.name, element));
      }
      int64_t first = 0;
      for (int64_t e = 0; e < element; ++e) first += leaf_count(tuple.elements[static_cast<size_t>(e)]);
      const int64_t n = leaf_count(tuple.elements[static_cast<size_t>(element)]);
      const Leaves& all = operand(0);
      if (first + n > static_cast<int64_t>(all.size())) {
        return invalid_input(fmt::format("'{}': operand has fewer leaves than its shape", instruction.name));
      }
      value.assign(all.begin() + first, all.begin() + first + n);
      list_stream(instruction, stream);
      return ok_status();
    }
    case Opcode::kBitcast:
    case Opcode::kReshape:  // row-major everywhere: a reshape is a view of its operand
      if (has_operand) value = operand(0);
      list_stream(instruction, stream);
      return ok_status();
    case Opcode::kAsyncStart:
      return emit_async_start(computation, index, stream, attribution, env, async);
    case Opcode::kAsyncUpdate:
      if (has_operand) value = operand(0);
      list_stream(instruction, stream);
      return ok_status();
    case Opcode::kAsyncDone:
      emit_async_done(computation, index, stream, env, async);
      return ok_status();
    default:
      break;
  }

  std::optional<int> target = policy_.stream_of(instruction);
  if (!target || *target == stream) {
    list_stream(instruction, stream);
    SL_ASSIGN_OR_RETURN(value, emit_op(computation, instruction, stream, attribution, env));
    return ok_status();
  }

  return emit_moved(computation, index, stream, *target, attribution, env, pending);
}

size_t Emitter::estimate_thunks(const hlo::Computation& computation, int depth) {
  // Roughly what emit_instruction emits (exact for straight-line code); only
  // a reservation hint, so trip counts and branches are taken at face value.
  auto [it, inserted] = estimates_.try_emplace(&computation, 0);
  if (!inserted || depth >= kMaxCallDepth) return it->second;
  auto callee = [&](const hlo::Instruction& instruction, size_t k) -> size_t {
    if (k >= instruction.called.size()) return 0;
    const int c = instruction.called[k];
    if (c < 0 || c >= static_cast<int>(module_.computations.size())) return 0;
    return estimate_thunks(module_.computations[static_cast<size_t>(c)], depth + 1);
  };
  size_t total = 0;
  for (const hlo::Instruction& instruction : computation.instructions) {
    size_t n = 1;
    switch (instruction.opcode) {
      case Opcode::kParameter: case Opcode::kConstant: case Opcode::kTuple: case Opcode::kGetTupleElement:
      case Opcode::kBitcast: case Opcode::kReshape: case Opcode::kAsyncUpdate:
        n = 0;
        break;
      case Opcode::kAsyncStart:  // record, wait, the work, record
        n = 3 + (instruction.async_wrapped && *instruction.async_wrapped != Opcode::kCall ? 1 : callee(instruction, 0));
        break;
      case Opcode::kCall: case Opcode::kConditional:
        n = callee(instruction, 0);
        break;
      case Opcode::kWhile: {
        auto measured = options_.trip_counts.find(instruction.name);
        const int64_t unknown = measured != options_.trip_counts.end() ? measured->second : options_.default_trip_count;
        const int64_t trips = std::clamp<int64_t>(instruction.known_trip_count.value_or(unknown), 0,
                                                  static_cast<int64_t>(kMaxReservedThunks));
        n = std::min(callee(instruction, 1) * static_cast<size_t>(trips), kMaxReservedThunks);
        break;
      }
      default:
        break;
    }
    // Moved to another stream: record, wait, ..., record, and the done's wait.
    if (n > 0 && instruction.opcode != Opcode::kAsyncStart && instruction.opcode != Opcode::kAsyncDone &&
        policy_.stream_of(instruction)) {
      n += 4;
    }
    total = std::min(total + n, kMaxReservedThunks);
  }
  estimates_[&computation] = total;
  return total;
}

void Emitter::list_stream(const hlo::Instruction& instruction, int stream) {
  if (!listed_.insert(&instruction).second) return;
  StreamAssignmentEntry entry;
  entry.instruction = instruction.name;
  entry.stream = stream;
  entry.overridden = policy_.is_overridden(instruction);
  entry.async_capable = is_async_capable(instruction);
  out_.streams.push_back(std::move(entry));
}

}  // namespace sl::sched::detail
