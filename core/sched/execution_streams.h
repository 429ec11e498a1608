#pragma once
// XLA's own stream assignment (xla/service/gpu/execution_stream_assignment.cc),
// reproduced for scope starts: every async-start (explicit or sugared, copy-start
// included) gets a stream once, however often it runs. Computations are visited
// breadth-first from the entry, following call/while/conditional only; each
// computation's instructions in XLA's post order. A start asks for its stream
// with `_xla_stream_annotation="N"` (compute stream N; on a collective, the
// communication stream N), else with operation_queue_id / an annotation on the
// wrapped instruction (docs/streams.md); otherwise XLA's round robin hands out
// compute streams 1..kXlaComputeStreams and communication streams
// kCommStreamBase.. in turn. Internal to core/sched.

#include <unordered_map>
#include <vector>

#include "core/hlo/module.h"

namespace sl::sched {

// XLA's defaults (ExecutionStreamAssignment::Options).
constexpr int kXlaComputeStreams = 4;
constexpr int kXlaCommunicationStreams = 1;

// Stream per scope-start instruction reachable from the entry the way XLA walks.
std::unordered_map<const hlo::Instruction*, int> assign_execution_streams(const hlo::Module& module);

// XLA's HloComputation::MakeInstructionPostOrder: depth-first from every
// instruction nothing uses (in text order), operands and control
// predecessors first. Indices into computation.instructions.
std::vector<int> post_order(const hlo::Computation& computation);

}  // namespace sl::sched
