#include "core/sched/emitter.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/common/huge_pages.h"
#include "core/sched/gemm.h"

namespace sl::sched::detail {
namespace {

using hlo::Opcode;

// Calls nest at most this deep (a computation calling itself never ends).
constexpr int kMaxCallDepth = 512;
// Reservation cap: a huge trip count must not reserve gigabytes up front.
constexpr size_t kMaxReservedThunks = size_t{1} << 20;

void append(Leaves& to, const Leaves& from) { to.insert(to.end(), from.begin(), from.end()); }

}  // namespace

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
  return Status::ok();
}

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
    std::optional<int> target = policy_.stream_of(instruction);
    if (!target || *target == stream) continue;
    int last_operand = -1;
    for (int operand : instruction.operands) last_operand = std::max(last_operand, operand);
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
  return order;
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
      return Status::ok();
    }
    case Opcode::kTuple:
      for (size_t k = 0; k < instruction.operands.size(); ++k) append(value, operand(k));
      list_stream(instruction, stream);
      return Status::ok();
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
      return Status::ok();
    }
    case Opcode::kBitcast:
    case Opcode::kReshape:  // row-major everywhere: a reshape is a view of its operand
      if (has_operand) value = operand(0);
      list_stream(instruction, stream);
      return Status::ok();
    case Opcode::kAsyncStart:
      return emit_async_start(computation, index, stream, attribution, env, async);
    case Opcode::kAsyncUpdate:
      if (has_operand) value = operand(0);
      list_stream(instruction, stream);
      return Status::ok();
    case Opcode::kAsyncDone:
      emit_async_done(computation, index, stream, env, async);
      return Status::ok();
    default:
      break;
  }

  std::optional<int> target = policy_.stream_of(instruction);
  if (!target || *target == stream) {
    list_stream(instruction, stream);
    SL_ASSIGN_OR_RETURN(value, emit_op(computation, instruction, stream, attribution, env));
    return Status::ok();
  }

  // Implicit async pair: start here, done just before the first user.
  const int async_stream = *target;
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
  pending[at].push_back(PendingDone{stream, finished, std::move(region), name});
  return Status::ok();
}

Result<Leaves> Emitter::emit_op(const hlo::Computation& computation, const hlo::Instruction& instruction,
                                int stream, const std::string* attribution, std::vector<Leaves>& env) {
  auto callee = [&](size_t k) -> const hlo::Computation* {
    if (k >= instruction.called.size()) return nullptr;
    const int c = instruction.called[k];
    if (c < 0 || c >= static_cast<int>(module_.computations.size())) return nullptr;
    return &module_.computations[static_cast<size_t>(c)];
  };
  auto missing = [&](const char* what) {
    return invalid_input(fmt::format("'{}': {} names no computation", instruction.name, what));
  };
  const bool calls = instruction.opcode == Opcode::kCall || instruction.opcode == Opcode::kWhile ||
                     instruction.opcode == Opcode::kConditional;
  if (!calls) {
    return emit_work(computation, instruction, instruction.opcode, instruction.shape, stream, attribution, env);
  }
  std::vector<Leaves> arguments;
  for (int operand : instruction.operands) arguments.push_back(env[static_cast<size_t>(operand)]);

  switch (instruction.opcode) {
    case Opcode::kCall: {
      const hlo::Computation* body = callee(0);
      if (!body) return missing("to_apply");
      Leaves result;
      SL_RETURN_IF_ERROR(emit_computation(*body, stream, attribution, arguments, &result));
      return result;
    }
    case Opcode::kWhile: {
      const hlo::Computation* body = callee(1);
      if (!body || arguments.size() != 1) return missing("body");
      int64_t trips = options_.default_trip_count;
      if (instruction.known_trip_count) {
        trips = *instruction.known_trip_count;
      } else if (warned_.insert(&instruction).second && warnings_) {
        warnings_->push_back(fmt::format("while '{}' has no known_trip_count: unrolled {} time(s)",
                                         instruction.name, trips));
      }
      Leaves state = arguments[0];
      for (int64_t t = 0; t < trips; ++t) {
        Leaves next;
        SL_RETURN_IF_ERROR(emit_computation(*body, stream, attribution, {state}, &next));
        state = std::move(next);
      }
      return state;
    }
    case Opcode::kConditional: {
      const hlo::Computation* branch = callee(0);
      if (!branch || arguments.size() < 2) return missing("branch_computations");
      if (warned_.insert(&instruction).second && warnings_) {
        warnings_->push_back(
            fmt::format("conditional '{}': lowering runs its first branch (the predicate is not evaluated)",
                        instruction.name));
      }
      Leaves result;
      SL_RETURN_IF_ERROR(emit_computation(*branch, stream, attribution, {arguments[1]}, &result));
      return result;
    }
    default:
      return emit_work(computation, instruction, instruction.opcode, instruction.shape, stream, attribution, env);
  }
}

Leaves Emitter::emit_work(const hlo::Computation& computation, const hlo::Instruction& instruction, Opcode op,
                          const hlo::Shape& result_shape, int stream, const std::string* attribution,
                          const std::vector<Leaves>& env) {
  const int64_t position = static_cast<int64_t>(out_.thunks.size());
  Thunk thunk;
  ThunkBuffers buffers;
  buffers.first = static_cast<uint32_t>(out_.buffer_ids.size());
  thunk.stream = stream;
  thunk.computation = &computation;
  thunk.instruction = &instruction;
  thunk.attributed_name = attribution ? *attribution : instruction.name;
  thunk.occurrence = occurrences_[{attribution, &instruction}]++;

  // A slice (static or dynamic) reads only the window it returns, not its
  // whole first operand: it counts as the result's bytes.
  const bool reads_its_window = op == Opcode::kSlice || op == Opcode::kDynamicSlice;
  int64_t bytes_in = 0;
  for (size_t k = 0; k < instruction.operands.size(); ++k) {
    for (int32_t id : env[static_cast<size_t>(instruction.operands[k])]) {
      out_.buffer_ids.push_back(id);
      ++buffers.operands;
      if (id < 0) continue;
      if (!(reads_its_window && k == 0)) bytes_in += out_.buffers[static_cast<size_t>(id)].slice.size;
      touch(id, position);
    }
  }
  const bool gemm = is_gemm(instruction);
  const int workspace_leaf = gemm ? gemm_workspace_leaf(instruction, result_shape) : -1;
  Leaves result = new_leaves(result_shape, &instruction, position, /*whole_program=*/false);
  int64_t bytes_out = 0;
  for (size_t k = 0; k < result.size(); ++k) {
    const int32_t id = result[k];
    if (static_cast<int>(k) == workspace_leaf) {
      buffers.workspace = id;
      continue;
    }
    out_.buffer_ids.push_back(id);
    ++buffers.results;
    if (id >= 0) bytes_out += out_.buffers[static_cast<size_t>(id)].slice.size;
  }

  if (gemm) {
    thunk.kind = ThunkKind::kGemm;
    thunk.gemm = gemm_dims(computation, instruction);
    thunk.flops = 2 * thunk.gemm.m * thunk.gemm.n * thunk.gemm.k * thunk.gemm.batch;
    if (workspace_leaf < 0) {
      buffers.workspace = new_buffer(kDefaultGemmWorkspaceBytes, &instruction, -1, position);
      touch(buffers.workspace, position);
    }
  } else if (hlo::is_collective(op)) {
    thunk.kind = ThunkKind::kCollective;
    thunk.collective.op = op;
    thunk.collective.bytes_in = bytes_in;
    thunk.collective.bytes_out = bytes_out;
    thunk.collective.rendezvous_id = next_rendezvous_++;
  } else {
    thunk.kind = ThunkKind::kKernel;
    if (hlo::is_elementwise(op)) {
      thunk.flops = result_shape.element_count();
    } else if (op == Opcode::kReduce && !instruction.operands.empty()) {
      thunk.flops = computation.instructions[static_cast<size_t>(instruction.operands[0])].shape.element_count();
    }
  }
  thunk.bytes_accessed = bytes_in + (reads_its_window ? 2 * bytes_out : bytes_out);
  out_.thunks.push_back(std::move(thunk));
  out_.buffers_of.push_back(buffers);
  return result;
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
  return Status::ok();
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

int32_t Emitter::new_buffer(int64_t size, const hlo::Instruction* instruction, int32_t leaf_index,
                            int64_t position) {
  LogicalBuffer buffer;
  buffer.slice.size = size;
  buffer.start = position;
  buffer.end = position;
  buffer.instruction = instruction;
  buffer.leaf = leaf_index;
  out_.buffers.push_back(buffer);
  return static_cast<int32_t>(out_.buffers.size()) - 1;
}

Leaves Emitter::new_leaves(const hlo::Shape& shape, const hlo::Instruction* instruction, int64_t position,
                           bool whole_program) {
  Leaves leaves;
  int32_t k = 0;
  for (const hlo::Shape* leaf : shape.leaves()) {
    const int64_t size = leaf->is_array() ? leaf->byte_size() : 0;
    if (size <= 0) {
      leaves.push_back(-1);
    } else {
      const int32_t id = new_buffer(size, instruction, k, position);
      if (whole_program) {
        whole_program_.push_back(id);
      } else {
        touch(id, position);
      }
      leaves.push_back(id);
    }
    ++k;
  }
  return leaves;
}

void Emitter::touch(int32_t buffer, int64_t position) {
  LogicalBuffer& b = out_.buffers[static_cast<size_t>(buffer)];
  b.end = std::max(b.end, position);
  if (!regions_.empty()) regions_.back()->touched.push_back(buffer);
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
    for (int operand : instruction.operands) {
      if (operand >= 0 && static_cast<size_t>(operand) < n && info.first_user[static_cast<size_t>(operand)] < 0) {
        info.first_user[static_cast<size_t>(operand)] = static_cast<int>(i);
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
        const int64_t trips = std::clamp<int64_t>(instruction.known_trip_count.value_or(options_.default_trip_count),
                                                  0, static_cast<int64_t>(kMaxReservedThunks));
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
