#pragma once
// Opcodes of the supported HLO subset (DESIGN section 2).

#include <optional>
#include <string_view>

namespace sl::hlo {

enum class Opcode {
  // data
  kParameter, kConstant, kIota, kTuple, kGetTupleElement, kCopy, kConvert, kBroadcast, kReshape,
  kTranspose, kSlice, kDynamicSlice, kDynamicUpdateSlice, kConcatenate, kBitcast,
  // elementwise
  kAdd, kSubtract, kMultiply, kDivide, kMaximum, kMinimum, kNegate, kAbs, kExp, kCompare, kSelect,
  kAnd, kOr, kRemainder,
  kReduce,
  // compute
  kDot, kCustomCall, kFusion,
  // ids
  kReplicaId, kPartitionId,
  // collectives (variadic)
  kAllGather, kReduceScatter, kAllReduce, kCollectivePermute,
  // control
  kCall, kWhile, kConditional,
  // async. Sugared `<op>-start`/`<op>-done` parse to kAsyncStart/kAsyncDone with
  // Instruction::async_wrapped set to <op>; explicit `async-start` has calls=.
  kAsyncStart, kAsyncUpdate, kAsyncDone,
};

std::string_view opcode_name(Opcode op);                       // "all-gather"
std::optional<Opcode> parse_opcode(std::string_view name);     // plain opcodes only, not "-start"

bool is_collective(Opcode op);        // all-gather, reduce-scatter, all-reduce, collective-permute
bool is_elementwise(Opcode op);       // unary/binary/ternary elementwise ops incl. compare/select
bool is_async(Opcode op);             // async-start/update/done

}  // namespace sl::hlo
