#include "core/hlo/opcode.h"

#include <array>
#include <utility>

namespace sl::hlo {
namespace {

constexpr std::pair<Opcode, std::string_view> kNames[] = {
#define SL_HLO_OPCODE_NAME(e, text) {Opcode::e, text},
    SL_HLO_OPCODE_LIST(SL_HLO_OPCODE_NAME)
#undef SL_HLO_OPCODE_NAME
    // Aliases accepted on input; printing uses the name above.
    {Opcode::kExp, "exp"},
};

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
  switch (op) {
    case Opcode::kAllGather: case Opcode::kReduceScatter: case Opcode::kAllReduce:
    case Opcode::kCollectivePermute: case Opcode::kAllToAll: case Opcode::kRaggedAllToAll:
    case Opcode::kCollectiveBroadcast: case Opcode::kCollectiveReduce:
      return true;
    default:
      return false;
  }
}

bool is_unary_elementwise(Opcode op) {
  switch (op) {
    case Opcode::kNegate: case Opcode::kAbs: case Opcode::kExp: case Opcode::kExpm1: case Opcode::kLog:
    case Opcode::kLog1p: case Opcode::kLogistic: case Opcode::kSqrt: case Opcode::kRsqrt: case Opcode::kCbrt:
    case Opcode::kTanh: case Opcode::kTan: case Opcode::kSin: case Opcode::kCos: case Opcode::kSinh:
    case Opcode::kCosh: case Opcode::kAsin: case Opcode::kAcos: case Opcode::kAtan: case Opcode::kAsinh:
    case Opcode::kAcosh: case Opcode::kAtanh: case Opcode::kErf: case Opcode::kFloor: case Opcode::kCeil:
    case Opcode::kRoundNearestAfz: case Opcode::kRoundNearestEven: case Opcode::kSign: case Opcode::kNot:
    case Opcode::kIsFinite: case Opcode::kClz: case Opcode::kPopulationCount: case Opcode::kReal:
    case Opcode::kImag: case Opcode::kConvert: case Opcode::kReducePrecision:
      return true;
    default:
      return false;
  }
}

bool is_binary_elementwise(Opcode op) {
  switch (op) {
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kRemainder: case Opcode::kPower:
    case Opcode::kAtan2: case Opcode::kComplex: case Opcode::kMulhi: case Opcode::kAnd: case Opcode::kOr:
    case Opcode::kXor: case Opcode::kShiftLeft: case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical: case Opcode::kCompare: case Opcode::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

bool is_elementwise(Opcode op) {
  return is_unary_elementwise(op) || is_binary_elementwise(op) || op == Opcode::kSelect || op == Opcode::kClamp;
}

bool is_async(Opcode op) {
  return op == Opcode::kAsyncStart || op == Opcode::kAsyncUpdate || op == Opcode::kAsyncDone;
}

}  // namespace sl::hlo
