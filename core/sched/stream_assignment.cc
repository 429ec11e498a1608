#include "core/sched/stream_assignment.h"

#include <fmt/format.h>

#include "core/sched/execution_streams.h"

namespace sl::sched {
namespace {

using hlo::Opcode;

// Default stream of an async-start that asks for none.
constexpr int kDefaultAsyncStream = 1;

}  // namespace

bool is_async_capable(const hlo::Instruction& instruction) {
  switch (instruction.opcode) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kReshape:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return false;
    default:
      return true;
  }
}

bool wraps_collective(const hlo::Module& module, const hlo::Instruction& async_start) {
  if (async_start.opcode != Opcode::kAsyncStart) return false;
  if (async_start.async_wrapped) return hlo::is_collective(*async_start.async_wrapped);
  if (async_start.called.empty()) return false;
  const int callee = async_start.called[0];
  if (callee < 0 || callee >= static_cast<int>(module.computations.size())) return false;
  for (const hlo::Instruction& inner : module.computations[static_cast<size_t>(callee)].instructions) {
    if (hlo::is_collective(inner.async_wrapped.value_or(inner.opcode))) return true;
  }
  return false;
}

std::optional<int> program_stream(const hlo::Module& module, const hlo::Instruction& instruction) {
  if (!is_async_capable(instruction)) return std::nullopt;
  std::optional<int64_t> requested = instruction.requested_stream();
  if (instruction.opcode == Opcode::kAsyncStart) {
    if (wraps_collective(module, instruction)) return kCommStreamBase;
    // The annotation may sit on the wrapped instruction rather than the start.
    if ((!requested || *requested == 0) && !instruction.async_wrapped && !instruction.called.empty()) {
      const auto& callee = module.computations[static_cast<size_t>(instruction.called[0])];
      if (callee.root >= 0) requested = callee.instructions[static_cast<size_t>(callee.root)].requested_stream();
    }
    if (requested && *requested > 0) return static_cast<int>(*requested);
    return kDefaultAsyncStream;
  }
  if (requested && *requested > 0) return static_cast<int>(*requested);
  return std::nullopt;
}

Result<StreamPolicy> StreamPolicy::create(const hlo::Module& module, const StreamOverrides& overrides,
                                          std::vector<std::string>* warnings) {
  StreamPolicy policy;
  policy.module_ = &module;
  policy.xla_streams_ = assign_execution_streams(module);
  if (overrides.empty()) return policy;

  std::unordered_map<std::string_view, const hlo::Instruction*> by_name;
  for (const auto& computation : module.computations) {
    for (const auto& instruction : computation.instructions) by_name.emplace(instruction.name, &instruction);
  }
  for (const auto& [name, stream] : overrides) {
    std::string_view key = name;
    if (!key.empty() && key.front() == '%') key.remove_prefix(1);
    auto it = by_name.find(key);
    if (it == by_name.end()) {
      return not_found(fmt::format("--stream {}={}: no instruction named '{}' in module '{}'", name, stream,
                                   key, module.name));
    }
    if (stream < 0) {
      return usage_error(fmt::format("--stream {}={}: stream numbers are >= 0", name, stream));
    }
    if (!is_async_capable(*it->second)) {
      if (warnings) {
        warnings->push_back(fmt::format("--stream {}={}: '{}' ({}) does no work of its own and cannot move; "
                                        "override ignored",
                                        name, stream, key, hlo::opcode_name(it->second->opcode)));
      }
      continue;
    }
    policy.overrides_[it->second] = stream;
  }
  return policy;
}

std::optional<int> StreamPolicy::stream_of(const hlo::Instruction& instruction) const {
  auto it = overrides_.find(&instruction);
  if (it != overrides_.end()) return it->second;
  if (std::optional<int> xla = xla_stream_of(instruction)) return xla;
  return program_stream(*module_, instruction);
}

std::optional<int> StreamPolicy::xla_stream_of(const hlo::Instruction& instruction) const {
  auto it = xla_streams_.find(&instruction);
  if (it == xla_streams_.end()) return std::nullopt;
  return it->second;
}

}  // namespace sl::sched
