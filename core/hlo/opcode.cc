#include "core/hlo/opcode.h"

#include <array>
#include <utility>

namespace sl::hlo {
namespace {

constexpr std::array<std::pair<Opcode, std::string_view>, 46> kNames = {{
    {Opcode::kParameter, "parameter"},
    {Opcode::kConstant, "constant"},
    {Opcode::kIota, "iota"},
    {Opcode::kTuple, "tuple"},
    {Opcode::kGetTupleElement, "get-tuple-element"},
    {Opcode::kCopy, "copy"},
    {Opcode::kConvert, "convert"},
    {Opcode::kBroadcast, "broadcast"},
    {Opcode::kReshape, "reshape"},
    {Opcode::kTranspose, "transpose"},
    {Opcode::kSlice, "slice"},
    {Opcode::kDynamicSlice, "dynamic-slice"},
    {Opcode::kDynamicUpdateSlice, "dynamic-update-slice"},
    {Opcode::kConcatenate, "concatenate"},
    {Opcode::kBitcast, "bitcast"},
    {Opcode::kAdd, "add"},
    {Opcode::kSubtract, "subtract"},
    {Opcode::kMultiply, "multiply"},
    {Opcode::kDivide, "divide"},
    {Opcode::kMaximum, "maximum"},
    {Opcode::kMinimum, "minimum"},
    {Opcode::kNegate, "negate"},
    {Opcode::kAbs, "abs"},
    {Opcode::kExp, "exponential"},
    {Opcode::kCompare, "compare"},
    {Opcode::kSelect, "select"},
    {Opcode::kAnd, "and"},
    {Opcode::kOr, "or"},
    {Opcode::kRemainder, "remainder"},
    {Opcode::kReduce, "reduce"},
    {Opcode::kDot, "dot"},
    {Opcode::kCustomCall, "custom-call"},
    {Opcode::kFusion, "fusion"},
    {Opcode::kReplicaId, "replica-id"},
    {Opcode::kPartitionId, "partition-id"},
    {Opcode::kAllGather, "all-gather"},
    {Opcode::kReduceScatter, "reduce-scatter"},
    {Opcode::kAllReduce, "all-reduce"},
    {Opcode::kCollectivePermute, "collective-permute"},
    {Opcode::kCall, "call"},
    {Opcode::kWhile, "while"},
    {Opcode::kConditional, "conditional"},
    {Opcode::kAsyncStart, "async-start"},
    {Opcode::kAsyncUpdate, "async-update"},
    {Opcode::kAsyncDone, "async-done"},
    // Aliases accepted on input; printing uses the first name above.
    {Opcode::kExp, "exp"},
}};

}  // namespace

std::string_view opcode_name(Opcode op) {
  for (const auto& [code, name] : kNames) {
    if (code == op) return name;
  }
  return "unknown";
}

std::optional<Opcode> parse_opcode(std::string_view name) {
  for (const auto& [code, n] : kNames) {
    if (n == name) return code;
  }
  return std::nullopt;
}

bool is_collective(Opcode op) {
  return op == Opcode::kAllGather || op == Opcode::kReduceScatter || op == Opcode::kAllReduce ||
         op == Opcode::kCollectivePermute;
}

bool is_elementwise(Opcode op) {
  switch (op) {
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kNegate: case Opcode::kAbs:
    case Opcode::kExp: case Opcode::kCompare: case Opcode::kSelect: case Opcode::kAnd:
    case Opcode::kOr: case Opcode::kRemainder: case Opcode::kConvert:
      return true;
    default:
      return false;
  }
}

bool is_async(Opcode op) {
  return op == Opcode::kAsyncStart || op == Opcode::kAsyncUpdate || op == Opcode::kAsyncDone;
}

}  // namespace sl::hlo
