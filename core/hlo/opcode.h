#pragma once
// Every opcode of XLA's xla/hlo/ir/hlo_opcode.h, except the sugared async
// collectives (`all-gather-start`, `copy-done`, ...): those parse to
// kAsyncStart/kAsyncUpdate/kAsyncDone with Instruction::async_wrapped set to
// the wrapped opcode, so one code path handles every async pair.

#include <optional>
#include <string_view>

namespace sl::hlo {

// (enum name, text name). Order is free; printing uses the text name.
#define SL_HLO_OPCODE_LIST(V)                                                       \
  /* data */                                                                       \
  V(kParameter, "parameter") V(kConstant, "constant") V(kIota, "iota")              \
  V(kTuple, "tuple") V(kGetTupleElement, "get-tuple-element") V(kCopy, "copy")      \
  V(kConvert, "convert") V(kBitcastConvert, "bitcast-convert")                      \
  V(kStochasticConvert, "stochastic-convert") V(kReducePrecision, "reduce-precision") \
  V(kBroadcast, "broadcast") V(kReshape, "reshape") V(kDynamicReshape, "dynamic-reshape") \
  V(kTranspose, "transpose") V(kSlice, "slice") V(kDynamicSlice, "dynamic-slice")   \
  V(kDynamicUpdateSlice, "dynamic-update-slice") V(kConcatenate, "concatenate")     \
  V(kBitcast, "bitcast") V(kPad, "pad") V(kReverse, "reverse") V(kGather, "gather") \
  V(kScatter, "scatter") V(kSort, "sort") V(kTopK, "topk")                          \
  V(kGetDimensionSize, "get-dimension-size") V(kSetDimensionSize, "set-dimension-size") \
  /* elementwise binary */                                                         \
  V(kAdd, "add") V(kSubtract, "subtract") V(kMultiply, "multiply") V(kDivide, "divide") \
  V(kMaximum, "maximum") V(kMinimum, "minimum") V(kRemainder, "remainder")          \
  V(kPower, "power") V(kAtan2, "atan2") V(kComplex, "complex") V(kMulhi, "mulhi")   \
  V(kAnd, "and") V(kOr, "or") V(kXor, "xor") V(kShiftLeft, "shift-left")            \
  V(kShiftRightArithmetic, "shift-right-arithmetic")                                \
  V(kShiftRightLogical, "shift-right-logical") V(kCompare, "compare")               \
  /* elementwise unary */                                                          \
  V(kNegate, "negate") V(kAbs, "abs") V(kExp, "exponential")                        \
  V(kExpm1, "exponential-minus-one") V(kLog, "log") V(kLog1p, "log-plus-one")       \
  V(kLogistic, "logistic") V(kSqrt, "sqrt") V(kRsqrt, "rsqrt") V(kCbrt, "cbrt")     \
  V(kTanh, "tanh") V(kTan, "tan") V(kSin, "sine") V(kCos, "cosine") V(kSinh, "sinh") \
  V(kCosh, "cosh") V(kAsin, "asin") V(kAcos, "acos") V(kAtan, "atan")               \
  V(kAsinh, "asinh") V(kAcosh, "acosh") V(kAtanh, "atanh") V(kErf, "erf")           \
  V(kFloor, "floor") V(kCeil, "ceil") V(kRoundNearestAfz, "round-nearest-afz")      \
  V(kRoundNearestEven, "round-nearest-even") V(kSign, "sign") V(kNot, "not")        \
  V(kIsFinite, "is-finite") V(kClz, "count-leading-zeros")                          \
  V(kPopulationCount, "popcnt") V(kReal, "real") V(kImag, "imag")                   \
  /* elementwise ternary */                                                        \
  V(kSelect, "select") V(kClamp, "clamp")                                           \
  /* reductions and windows */                                                     \
  V(kReduce, "reduce") V(kReduceWindow, "reduce-window")                            \
  V(kSelectAndScatter, "select-and-scatter") V(kMap, "map") V(kScan, "scan")        \
  /* compute */                                                                    \
  V(kDot, "dot") V(kRaggedDot, "ragged-dot") V(kScaledDot, "scaled-dot")            \
  V(kConvolution, "convolution") V(kFft, "fft") V(kCholesky, "cholesky")            \
  V(kTriangularSolve, "triangular-solve") V(kBatchNormTraining, "batch-norm-training") \
  V(kBatchNormInference, "batch-norm-inference") V(kBatchNormGrad, "batch-norm-grad") \
  V(kCustomCall, "custom-call") V(kFusion, "fusion")                                \
  /* random numbers */                                                             \
  V(kRng, "rng") V(kRngBitGenerator, "rng-bit-generator")                           \
  V(kRngGetAndUpdateState, "rng-get-and-update-state")                              \
  /* ids */                                                                        \
  V(kReplicaId, "replica-id") V(kPartitionId, "partition-id")                       \
  /* collectives */                                                                \
  V(kAllGather, "all-gather") V(kReduceScatter, "reduce-scatter")                   \
  V(kAllReduce, "all-reduce") V(kCollectivePermute, "collective-permute")           \
  V(kAllToAll, "all-to-all") V(kRaggedAllToAll, "ragged-all-to-all")                \
  V(kCollectiveBroadcast, "collective-broadcast") V(kCollectiveReduce, "collective-reduce") \
  V(kSend, "send") V(kSendDone, "send-done") V(kRecv, "recv") V(kRecvDone, "recv-done") \
  /* control and side effects */                                                   \
  V(kCall, "call") V(kWhile, "while") V(kConditional, "conditional")                \
  V(kAfterAll, "after-all") V(kAddDependency, "add-dependency")                     \
  V(kOptimizationBarrier, "opt-barrier") V(kDomain, "domain")                       \
  V(kInfeed, "infeed") V(kOutfeed, "outfeed") V(kShuffle, "shuffle")                \
  /* async (see the comment at the top) */                                         \
  V(kAsyncStart, "async-start") V(kAsyncUpdate, "async-update") V(kAsyncDone, "async-done")

enum class Opcode {
#define SL_HLO_OPCODE_ENUM(e, text) e,
  SL_HLO_OPCODE_LIST(SL_HLO_OPCODE_ENUM)
#undef SL_HLO_OPCODE_ENUM
};

std::string_view opcode_name(Opcode op);                       // "all-gather"
std::optional<Opcode> parse_opcode(std::string_view name);     // plain opcodes only, not "-start"

bool is_collective(Opcode op);        // all-gather, reduce-scatter, all-reduce, collective-permute,
                                      // all-to-all, ragged-all-to-all, collective-broadcast/-reduce
bool is_elementwise(Opcode op);       // unary/binary/ternary elementwise ops incl. compare/select/convert
bool is_unary_elementwise(Opcode op);
bool is_binary_elementwise(Opcode op);
bool is_async(Opcode op);             // async-start/update/done

}  // namespace sl::hlo
