#include "core/exec/event_kind.h"

namespace sl::exec {

using hlo::Opcode;
using trace::EventKind;

trace::EventKind event_kind_of(const hlo::Instruction& instruction) {
  Opcode op = instruction.async_wrapped.value_or(instruction.opcode);
  if (op == Opcode::kDot) return EventKind::kGemm;
  if (op == Opcode::kCustomCall) {
    const std::string& t = instruction.custom_call_target;
    return t.rfind("__cublas$", 0) == 0 ? EventKind::kGemm : EventKind::kOther;
  }
  if (hlo::is_collective(op)) return EventKind::kCollective;
  if (hlo::is_elementwise(op) || op == Opcode::kReduce || op == Opcode::kIota) return EventKind::kElementwise;
  switch (op) {
    case Opcode::kCopy: case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kTranspose:
    case Opcode::kSlice: case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice:
    case Opcode::kConcatenate: case Opcode::kConstant: case Opcode::kParameter: case Opcode::kBitcast:
      return EventKind::kCopy;
    default:
      return EventKind::kOther;
  }
}

}  // namespace sl::exec
