#pragma once
// Scalar functions behind the elementwise ops, chosen by opcode and element
// type. Narrow floats (f8 ... f32) compute in f32, f64 in double, integers in
// 64-bit two's complement with the type's signedness and width; results are
// unrounded (the caller rounds or wraps them to the result type).

#include <functional>

#include "core/common/status.h"
#include "core/hlo/opcode.h"
#include "core/hlo/shape.h"

namespace sl::exec::cpu {

using UnaryOp = std::function<double(double)>;
using BinaryOp = std::function<double(double, double)>;

// Unary elementwise ops on operands of `type` (is-finite returns 0/1).
Result<UnaryOp> unary_op(hlo::Opcode op, hlo::PrimitiveType type);
// Binary elementwise ops except compare, on operands of `type`.
Result<BinaryOp> binary_op(hlo::Opcode op, hlo::PrimitiveType type);

// reduce-precision of one value to `exponent_bits` and `mantissa_bits`, as
// XLA defines it: round to nearest even in the mantissa, overflow to
// infinity, values below the smallest normal to signed zero, NaN kept.
double reduce_precision(double v, hlo::PrimitiveType type, int exponent_bits, int mantissa_bits);

}  // namespace sl::exec::cpu
