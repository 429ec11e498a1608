#pragma once
// Where instructions run (docs/streams.md), before lowering places them:
//   - operation_queue_id / _xla_stream_annotation N != 0: compute stream N,
//     as an implicit async pair (start in place, done before the first user);
//   - async-start: XLA's own assignment (execution_streams.h): its annotated
//     stream, else XLA's round robin over compute streams 1..4 or the
//     communication stream when it wraps a collective;
//   - everything else (sync collectives included) runs on its parent's stream
//     (stream 0 at top level);
//   - user overrides win over all of that. Moving a sync instruction to
//     another stream gives it an implicit async pair, exactly like
//     operation_queue_id does.

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/common/status.h"
#include "core/hlo/module.h"
#include "core/sched/streams.h"

namespace sl::sched {

// May the user move it? False for aliases and bookkeeping (parameter,
// constant, tuple, get-tuple-element, bitcast, reshape) and for
// async-update/async-done, which follow their start.
bool is_async_capable(const hlo::Instruction& instruction);

// An async-start (explicit with calls=, or sugared) whose work is a collective.
bool wraps_collective(const hlo::Module& module, const hlo::Instruction& async_start);

// The program's own choice: a stream number, or nullopt = run on the parent's stream.
std::optional<int> program_stream(const hlo::Module& module, const hlo::Instruction& instruction);

class StreamPolicy {
 public:
  // Resolves override names; an unknown name is an error (kNotFound), an
  // override of an instruction that cannot move is ignored with a warning.
  static Result<StreamPolicy> create(const hlo::Module& module, const StreamOverrides& overrides,
                                     std::vector<std::string>* warnings);

  // Stream the instruction runs on after overrides; nullopt = its parent's.
  std::optional<int> stream_of(const hlo::Instruction& instruction) const;
  // XLA's stream for an async-start, before overrides; nullopt when XLA's walk
  // does not reach it (a start nested in an async computation).
  std::optional<int> xla_stream_of(const hlo::Instruction& instruction) const;
  bool is_overridden(const hlo::Instruction& instruction) const { return overrides_.count(&instruction) > 0; }

 private:
  const hlo::Module* module_ = nullptr;
  std::unordered_map<const hlo::Instruction*, int> overrides_;
  std::unordered_map<const hlo::Instruction*, int> xla_streams_;
};

}  // namespace sl::sched
