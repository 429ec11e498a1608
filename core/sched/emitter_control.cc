// Control flow in lowering: call inlined, while unrolled (trip count from
// known_trip_count or the condition, under the unrolling cap), conditional's
// first branch.

#include "core/sched/emitter.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/sched/trip_count.h"

namespace sl::sched::detail {

using hlo::Opcode;

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
      SL_ASSIGN_OR_RETURN(const int64_t trips, trip_count(computation, instruction));
      Leaves state = arguments[0];
      for (int64_t t = 0; t < trips; ++t) {
        Leaves next;
        SL_RETURN_IF_ERROR(emit_computation(*body, stream, attribution, {state}, &next));
        state = std::move(next);
        if (static_cast<int64_t>(out_.thunks.size()) > options_.max_thunks) {
          return invalid_input(fmt::format("{}: error: while %{} unrolls past {} thunks at trip {} of {}; "
                                           "raise the cap with --max-unroll",
                                           where(instruction), instruction.name, options_.max_thunks, t + 1, trips));
        }
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

Result<int64_t> Emitter::trip_count(const hlo::Computation& computation, const hlo::Instruction& instruction) {
  const int64_t cap = std::max<int64_t>(options_.max_thunks, 0);
  std::optional<int64_t> trips = instruction.known_trip_count;
  if (!trips) {
    if (auto measured = options_.trip_counts.find(instruction.name); measured != options_.trip_counts.end()) {
      trips = measured->second;
    }
  }
  if (!trips) {
    trips = infer_trip_count(module_, computation, instruction, cap);
    if (trips && *trips <= cap && warned_.insert(&instruction).second && warnings_) {
      warnings_->push_back(fmt::format("while '{}' has no known_trip_count: its condition's constant bound gives {} "
                                       "trip(s)",
                                       instruction.name, *trips));
    }
  }
  if (!trips) {
    trips = options_.default_trip_count;
    if (warned_.insert(&instruction).second && warnings_) {
      warnings_->push_back(fmt::format("while '{}' has no known_trip_count and no constant bound: unrolled {} time(s)",
                                       instruction.name, *trips));
    }
  }
  if (*trips > cap) {
    return invalid_input(fmt::format("{}: error: while %{} runs {} trips, more than the unrolling cap of {}; raise "
                                     "the cap with --max-unroll",
                                     where(instruction), instruction.name, *trips, cap));
  }
  return std::max<int64_t>(*trips, 0);
}

std::string Emitter::where(const hlo::Instruction& instruction) const {
  return fmt::format("{}:{}:{}", module_.file_name.empty() ? "<program>" : module_.file_name, instruction.loc.line,
                     instruction.loc.col);
}

}  // namespace sl::sched::detail
