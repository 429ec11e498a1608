// The scalar functions of the elementwise ops (see elementwise_fns.h).

#include "core/exec/cpu/elementwise_fns.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/exec/cpu/element_bits.h"
#include "core/exec/cpu/ops.h"

namespace sl::exec::cpu {
namespace {

using hlo::Opcode;
using hlo::PrimitiveType;

Status undefined(Opcode op, PrimitiveType type) {
  return invalid_input(fmt::format("{} is not defined on {} values", hlo::opcode_name(op),
                                   hlo::primitive_type_name(type)));
}

// Float math in the compute type F (float for f8..f32, double for f64).
template <typename F>
Result<UnaryOp> float_unary(Opcode op, PrimitiveType type) {
  auto wrap = [](auto fn) -> UnaryOp {
    return [fn](double x) { return static_cast<double>(fn(static_cast<F>(x))); };
  };
  switch (op) {
    case Opcode::kNegate: return wrap([](F a) { return -a; });
    case Opcode::kAbs: return wrap([](F a) { return std::fabs(a); });
    case Opcode::kExp: return wrap([](F a) { return std::exp(a); });
    case Opcode::kExpm1: return wrap([](F a) { return std::expm1(a); });
    case Opcode::kLog: return wrap([](F a) { return std::log(a); });
    case Opcode::kLog1p: return wrap([](F a) { return std::log1p(a); });
    case Opcode::kLogistic: return wrap([](F a) { return F(1) / (F(1) + std::exp(-a)); });
    case Opcode::kSqrt: return wrap([](F a) { return std::sqrt(a); });
    case Opcode::kRsqrt: return wrap([](F a) { return F(1) / std::sqrt(a); });
    case Opcode::kCbrt: return wrap([](F a) { return std::cbrt(a); });
    case Opcode::kTanh: return wrap([](F a) { return std::tanh(a); });
    case Opcode::kTan: return wrap([](F a) { return std::tan(a); });
    case Opcode::kSin: return wrap([](F a) { return std::sin(a); });
    case Opcode::kCos: return wrap([](F a) { return std::cos(a); });
    case Opcode::kSinh: return wrap([](F a) { return std::sinh(a); });
    case Opcode::kCosh: return wrap([](F a) { return std::cosh(a); });
    case Opcode::kAsin: return wrap([](F a) { return std::asin(a); });
    case Opcode::kAcos: return wrap([](F a) { return std::acos(a); });
    case Opcode::kAtan: return wrap([](F a) { return std::atan(a); });
    case Opcode::kAsinh: return wrap([](F a) { return std::asinh(a); });
    case Opcode::kAcosh: return wrap([](F a) { return std::acosh(a); });
    case Opcode::kAtanh: return wrap([](F a) { return std::atanh(a); });
    case Opcode::kErf: return wrap([](F a) { return std::erf(a); });
    case Opcode::kFloor: return wrap([](F a) { return std::floor(a); });
    case Opcode::kCeil: return wrap([](F a) { return std::ceil(a); });
    case Opcode::kRoundNearestAfz: return wrap([](F a) { return std::round(a); });
    case Opcode::kRoundNearestEven: return wrap([](F a) { return std::nearbyint(a); });
    // sign: NaN stays NaN, +-0 stays +-0, otherwise +-1.
    case Opcode::kSign: return wrap([](F a) { return std::isnan(a) ? a : std::copysign(F(a != F(0)), a); });
    case Opcode::kIsFinite: return wrap([](F a) { return F(std::isfinite(a) ? 1 : 0); });
    default: return undefined(op, type);
  }
}

template <typename F>
Result<BinaryOp> float_binary(Opcode op, PrimitiveType type) {
  auto wrap = [](auto fn) -> BinaryOp {
    return [fn](double x, double y) { return static_cast<double>(fn(static_cast<F>(x), static_cast<F>(y))); };
  };
  switch (op) {
    // XLA: 0^0 = 1 (std::pow agrees, also for NaN exponents of base 1).
    case Opcode::kPower: return wrap([](F a, F b) { return std::pow(a, b); });
    case Opcode::kAtan2: return wrap([](F a, F b) { return std::atan2(a, b); });
    default: break;
  }
  SL_ASSIGN_OR_RETURN(BinaryFn fn, binary_fn(op, type));
  return BinaryOp(fn);
}

// Integers: values are exact doubles; arithmetic wraps in 64 bits and the
// caller wraps the result to the type's width.
struct IntType {
  int bits = 32;
  bool is_signed = true;
  PrimitiveType type = PrimitiveType::kS32;

  uint64_t pattern(double v) const { return integer_bits(v) & low_mask(bits); }
  double value(uint64_t p) const { return decode_bits(p, type); }
  bool out_of_range_shift(double amount) const { return pattern(amount) >= static_cast<uint64_t>(bits); }
};

// x^n by squaring with wraparound; XLA gives 0 for negative exponents
// except for bases 1 and -1.
double integer_power(double base, double exponent, const IntType& t) {
  const auto b = static_cast<int64_t>(integer_bits(base));
  const auto e = static_cast<int64_t>(integer_bits(exponent));
  if (t.is_signed && e < 0) {
    if (b == 1) return 1;
    if (b == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1, square = integer_bits(base);
  for (auto n = static_cast<uint64_t>(e); n != 0; n >>= 1) {
    if (n & 1) result *= square;
    square *= square;
  }
  return t.value(result & low_mask(t.bits));
}

Result<UnaryOp> integer_unary(Opcode op, PrimitiveType type) {
  const IntType t{hlo::primitive_type_bits(type), hlo::is_signed_integral(type), type};
  switch (op) {
    case Opcode::kNot:
      if (type == PrimitiveType::kPred) return UnaryOp([](double a) { return a != 0.0 ? 0.0 : 1.0; });
      return UnaryOp([t](double a) { return t.value(~t.pattern(a)); });
    case Opcode::kPopulationCount:
      return UnaryOp([t](double a) { return static_cast<double>(std::popcount(t.pattern(a))); });
    case Opcode::kClz:
      return UnaryOp([t](double a) { return static_cast<double>(t.bits - std::bit_width(t.pattern(a))); });
    case Opcode::kSign:
      return UnaryOp([](double a) { return a > 0 ? 1.0 : (a < 0 ? -1.0 : 0.0); });
    case Opcode::kIsFinite:
      return UnaryOp([](double) { return 1.0; });
    case Opcode::kNegate:
      return UnaryOp([t](double a) { return t.value((0 - t.pattern(a)) & low_mask(t.bits)); });
    case Opcode::kAbs:
      return UnaryOp([t](double a) { return a < 0 ? t.value((0 - t.pattern(a)) & low_mask(t.bits)) : a; });
    default:
      return undefined(op, type);
  }
}

Result<BinaryOp> integer_binary(Opcode op, PrimitiveType type) {
  const IntType t{hlo::primitive_type_bits(type), hlo::is_signed_integral(type), type};
  const bool pred = type == PrimitiveType::kPred;
  switch (op) {
    case Opcode::kAnd:
      if (pred) return BinaryOp([](double a, double b) { return (a != 0 && b != 0) ? 1.0 : 0.0; });
      return BinaryOp([t](double a, double b) { return t.value(t.pattern(a) & t.pattern(b)); });
    case Opcode::kOr:
      if (pred) return BinaryOp([](double a, double b) { return (a != 0 || b != 0) ? 1.0 : 0.0; });
      return BinaryOp([t](double a, double b) { return t.value(t.pattern(a) | t.pattern(b)); });
    case Opcode::kXor:
      if (pred) return BinaryOp([](double a, double b) { return ((a != 0) != (b != 0)) ? 1.0 : 0.0; });
      return BinaryOp([t](double a, double b) { return t.value(t.pattern(a) ^ t.pattern(b)); });
    default:
      break;
  }
  if (pred) return undefined(op, type);
  switch (op) {
    // Shift amounts are unsigned: a negative amount is out of range too.
    case Opcode::kShiftLeft:
      return BinaryOp([t](double a, double b) {
        return t.out_of_range_shift(b) ? 0.0 : t.value((t.pattern(a) << t.pattern(b)) & low_mask(t.bits));
      });
    case Opcode::kShiftRightLogical:
      return BinaryOp([t](double a, double b) {
        return t.out_of_range_shift(b) ? 0.0 : t.value(t.pattern(a) >> t.pattern(b));
      });
    case Opcode::kShiftRightArithmetic:
      return BinaryOp([t](double a, double b) {
        // Sign-extend the type's pattern to 64 bits, shift, and keep the width.
        const auto bits = t.pattern(a);
        const bool negative = t.bits < 64 ? (bits >> (t.bits - 1)) & 1 : (bits >> 63) & 1;
        const int64_t extended = static_cast<int64_t>(negative ? bits | ~low_mask(t.bits) : bits);
        if (t.out_of_range_shift(b)) return t.value(negative ? low_mask(t.bits) : 0);
        return t.value(static_cast<uint64_t>(extended >> t.pattern(b)) & low_mask(t.bits));
      });
    case Opcode::kPower:
      return BinaryOp([t](double a, double b) { return integer_power(a, b, t); });
    default:
      break;
  }
  SL_ASSIGN_OR_RETURN(BinaryFn fn, binary_fn(op, type));
  return BinaryOp(fn);
}

}  // namespace

Result<UnaryOp> unary_op(Opcode op, PrimitiveType type) {
  if (type == PrimitiveType::kF64) return float_unary<double>(op, type);
  if (hlo::is_floating(type) || hlo::is_complex(type)) return float_unary<float>(op, type);
  if (hlo::is_integral(type) || type == PrimitiveType::kPred) return integer_unary(op, type);
  return undefined(op, type);
}

Result<BinaryOp> binary_op(Opcode op, PrimitiveType type) {
  if (type == PrimitiveType::kF64) return float_binary<double>(op, type);
  if (hlo::is_floating(type) || hlo::is_complex(type)) return float_binary<float>(op, type);
  if (hlo::is_integral(type) || type == PrimitiveType::kPred) return integer_binary(op, type);
  return undefined(op, type);
}

double reduce_precision(double v, PrimitiveType type, int exponent_bits, int mantissa_bits) {
  // On the storage bits of f32 (narrow floats compute in f32) or f64.
  const bool wide = type == PrimitiveType::kF64;
  const int src_mantissa = wide ? 52 : 23;
  const int src_exponent = wide ? 11 : 8;
  uint64_t x = encode_bits(v, wide ? PrimitiveType::kF64 : PrimitiveType::kF32);
  const uint64_t original = x;
  const bool is_nan = std::isnan(v);
  if (mantissa_bits < src_mantissa) {
    const int drop = src_mantissa - mantissa_bits;
    const uint64_t last_kept = uint64_t{1} << drop;
    const uint64_t bias = ((last_kept >> 1) - 1) + ((x >> drop) & 1);  // ties to even
    x = (x + bias) & ~(last_kept - 1);
  }
  if (exponent_bits < src_exponent) {
    const uint64_t sign = x & (uint64_t{1} << (src_exponent + src_mantissa));
    const uint64_t exponent_mask = low_mask(src_exponent) << src_mantissa;
    const int64_t src_bias = (int64_t{1} << (src_exponent - 1)) - 1;
    const int64_t reduced_bias = (int64_t{1} << (exponent_bits - 1)) - 1;
    const uint64_t exponent = x & exponent_mask;
    const auto max_exponent = static_cast<uint64_t>(src_bias + reduced_bias) << src_mantissa;
    const auto min_exponent = static_cast<uint64_t>(src_bias - reduced_bias) << src_mantissa;
    if (exponent > max_exponent) x = sign | exponent_mask;
    else if (exponent <= min_exponent) x = sign;
  }
  // With no mantissa bits left a NaN cannot be told from infinity.
  if (is_nan && mantissa_bits > 0) x = original;
  return decode_bits(x, wide ? PrimitiveType::kF64 : PrimitiveType::kF32);
}

}  // namespace sl::exec::cpu
