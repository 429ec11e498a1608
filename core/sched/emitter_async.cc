// Async pairs and their regions: explicit and sugared async-start/-done,
// implicit pairs for moved instructions, the record/wait events between
// streams, and the live ranges of what runs concurrently.

#include "core/sched/emitter.h"

#include <fmt/format.h>

#include <algorithm>

namespace sl::sched::detail {

using hlo::Opcode;

Status Emitter::emit_moved(const hlo::Computation& computation, int index, int stream, int async_stream,
                           const std::string* attribution, std::vector<Leaves>& env,
                           std::map<int, std::vector<PendingDone>>& pending) {
  // Implicit async pair: start here, done just before the first user.
  const hlo::Instruction& instruction = computation.instructions[static_cast<size_t>(index)];
  Leaves& value = env[static_cast<size_t>(index)];
  list_stream(instruction, async_stream);
  const std::string* name = attribution ? attribution : &instruction.name;
  const int ready = out_.num_events++;
  const int64_t start = push_event_thunk(ThunkKind::kRecordEvent, stream, ready, name);
  push_event_thunk(ThunkKind::kWaitEvent, async_stream, ready, name);
  Region region{start, {}};
  regions_.push_back(&region);
  auto result = emit_op(computation, instruction, async_stream, name, env);
  regions_.pop_back();
  if (!result.is_ok()) return result.status();
  value = std::move(result).value();
  const int finished = out_.num_events++;
  push_event_thunk(ThunkKind::kRecordEvent, async_stream, finished, name);
  int at = info(computation).first_user[static_cast<size_t>(index)];
  if (at < 0) at = static_cast<int>(computation.instructions.size());
  pending[at].push_back(PendingDone{stream, async_stream, finished, std::move(region), name});
  return ok_status();
}

Status Emitter::emit_async_start(const hlo::Computation& computation, int index, int stream,
                                 const std::string* attribution, std::vector<Leaves>& env,
                                 std::unordered_map<int, AsyncState>& async) {
  const hlo::Instruction& start = computation.instructions[static_cast<size_t>(index)];
  const int async_stream = policy_.stream_of(start).value_or(stream);
  list_stream(start, async_stream);
  const std::string* name = attribution ? attribution : &start.name;
  AsyncState& state = async[index];
  state.inline_on_parent = async_stream == stream;

  // The wrapped work: a called computation (async-start calls=, call-start),
  // or the sugared op itself, computing the done's shape.
  auto emit_wrapped = [&]() -> Result<Leaves> {
    const bool calls_computation = !start.async_wrapped || *start.async_wrapped == Opcode::kCall;
    if (calls_computation) {
      if (start.called.empty() || start.called[0] < 0 ||
          start.called[0] >= static_cast<int>(module_.computations.size())) {
        return invalid_input(fmt::format("'{}': async-start names no called computation", start.name));
      }
      std::vector<Leaves> arguments;
      for (int operand : start.operands) arguments.push_back(env[static_cast<size_t>(operand)]);
      Leaves result;
      SL_RETURN_IF_ERROR(emit_computation(module_.computations[static_cast<size_t>(start.called[0])], async_stream,
                                          name, arguments, &result));
      return result;
    }
    const int done = info(computation).done_of[static_cast<size_t>(index)];
    const hlo::Shape* output = &start.shape;
    if (done >= 0) {
      output = &computation.instructions[static_cast<size_t>(done)].shape;
    } else if (start.shape.is_tuple() && start.shape.elements.size() >= 2) {
      output = &start.shape.elements[1];
    }
    return emit_work(computation, start, *start.async_wrapped, *output, async_stream, name, env);
  };

  Result<Leaves> output = Status(ErrorCode::kInvalidInput, "unreached");
  if (state.inline_on_parent) {
    output = emit_wrapped();
  } else {
    const int ready = out_.num_events++;
    state.region.start = push_event_thunk(ThunkKind::kRecordEvent, stream, ready, name);
    push_event_thunk(ThunkKind::kWaitEvent, async_stream, ready, name);
    regions_.push_back(&state.region);
    output = emit_wrapped();
    regions_.pop_back();
    state.event = out_.num_events++;
    if (output.is_ok()) push_event_thunk(ThunkKind::kRecordEvent, async_stream, state.event, name);
  }
  if (!output.is_ok()) return output.status();
  state.output = std::move(output).value();

  // The start's own value ((operands), output, context...) for get-tuple-element users.
  Leaves& value = env[static_cast<size_t>(index)];
  const hlo::Shape& shape = start.shape;
  if (!shape.is_tuple()) {
    value = state.output;
  } else {
    value.assign(static_cast<size_t>(leaf_count(shape)), -1);
    Leaves inputs;
    for (int operand : start.operands) append(inputs, env[static_cast<size_t>(operand)]);
    size_t at = 0;
    for (size_t e = 0; e < shape.elements.size(); ++e) {
      const size_t n = static_cast<size_t>(leaf_count(shape.elements[e]));
      const Leaves* source = e == 0 ? &inputs : e == 1 ? &state.output : nullptr;
      if (source && source->size() == n) std::copy(source->begin(), source->end(), value.begin() + at);
      at += n;
    }
  }
  return ok_status();
}

void Emitter::emit_async_done(const hlo::Computation& computation, int index, int stream, std::vector<Leaves>& env,
                              std::unordered_map<int, AsyncState>& async) {
  const hlo::Instruction& done = computation.instructions[static_cast<size_t>(index)];
  // Follow async-update links back to the start.
  int start = done.operands.empty() ? -1 : done.operands[0];
  while (start >= 0 && computation.instructions[static_cast<size_t>(start)].opcode == Opcode::kAsyncUpdate) {
    const auto& update = computation.instructions[static_cast<size_t>(start)];
    start = update.operands.empty() ? -1 : update.operands[0];
  }
  auto it = start >= 0 ? async.find(start) : async.end();
  if (it == async.end()) {
    list_stream(done, stream);
    return;
  }
  AsyncState& state = it->second;
  const hlo::Instruction& start_instruction = computation.instructions[static_cast<size_t>(start)];
  list_stream(done, policy_.stream_of(start_instruction).value_or(stream));
  if (!state.inline_on_parent && state.event >= 0) {
    const int64_t position = push_event_thunk(ThunkKind::kWaitEvent, stream, state.event, &start_instruction.name);
    close_region(state.region, position);
    state.event = -1;  // a second done (invalid program) waits on nothing new
  }
  env[static_cast<size_t>(index)] = state.output;
}

int64_t Emitter::push_event_thunk(ThunkKind kind, int stream, int event, const std::string* name) {
  Thunk thunk;
  thunk.kind = kind;
  thunk.stream = stream;
  thunk.event = event;
  if (name) thunk.attributed_name = *name;
  out_.thunks.push_back(std::move(thunk));
  out_.buffers_of.emplace_back();
  return static_cast<int64_t>(out_.thunks.size()) - 1;
}

void Emitter::close_region(Region& region, int64_t end) {
  for (int32_t id : region.touched) {
    LogicalBuffer& buffer = out_.buffers[static_cast<size_t>(id)];
    buffer.start = std::min(buffer.start, region.start);
    buffer.end = std::max(buffer.end, end);
  }
  // Work nested in an enclosing region is also concurrent with that region's parent.
  if (!regions_.empty()) append(regions_.back()->touched, region.touched);
  region.touched.clear();
}

}  // namespace sl::sched::detail
