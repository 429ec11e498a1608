// Elementwise ops. Narrow floats (f16, bf16, f32) compute in f32, f64 in
// double, integers and pred in 64-bit two's complement; the result is then
// rounded (or wrapped) to the result type.

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <limits>

#include "core/exec/cpu/element_bits.h"
#include "core/exec/cpu/elementwise_fns.h"
#include "core/exec/cpu/ops.h"

namespace sl::exec::cpu {
namespace {

using hlo::ComparisonDirection;
using hlo::Opcode;
using hlo::PrimitiveType;

enum class Category { kNarrowFloat, kF64, kInteger };

Category category(PrimitiveType type) {
  if (type == PrimitiveType::kF64) return Category::kF64;
  if (hlo::is_floating(type)) return Category::kNarrowFloat;
  return Category::kInteger;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Integer values are exact doubles of their type; the 64-bit pattern wraps.
int64_t as_int(double v) { return static_cast<int64_t>(integer_bits(v)); }
uint64_t as_uint(double v) { return integer_bits(v); }
int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrap_sub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

// XLA integer division: x / 0 = -1 (all ones when unsigned), INT_MIN / -1 =
// INT_MIN (the negation wraps); remainder: x % 0 = x, INT_MIN % -1 = 0.
int64_t int_divide(int64_t a, int64_t b) {
  if (b == 0) return -1;
  if (b == -1) return wrap_sub(0, a);
  return a / b;
}
int64_t int_remainder(int64_t a, int64_t b) {
  if (b == 0) return a;
  if (b == -1) return 0;
  return a % b;
}

template <typename F>
double fmaxnan(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  return static_cast<double>(a > b ? a : b);
}
template <typename F>
double fminnan(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  return static_cast<double>(a < b ? a : b);
}

#define SL_F32(expr) [](double x, double y) -> double { float a = static_cast<float>(x), b = static_cast<float>(y); (void)b; return static_cast<double>(expr); }
#define SL_F64(expr) [](double a, double b) -> double { (void)b; return expr; }
#define SL_INT(expr) [](double x, double y) -> double { int64_t a = as_int(x), b = as_int(y); (void)b; return static_cast<double>(expr); }
#define SL_UINT(expr) [](double x, double y) -> double { uint64_t a = as_uint(x), b = as_uint(y); (void)b; return static_cast<double>(expr); }

Result<BinaryFn> float32_fn(Opcode op) {
  switch (op) {
    case Opcode::kAdd: return BinaryFn{SL_F32(a + b)};
    case Opcode::kSubtract: return BinaryFn{SL_F32(a - b)};
    case Opcode::kMultiply: return BinaryFn{SL_F32(a * b)};
    case Opcode::kDivide: return BinaryFn{SL_F32(a / b)};
    case Opcode::kMaximum: return BinaryFn{SL_F32(fmaxnan(a, b))};
    case Opcode::kMinimum: return BinaryFn{SL_F32(fminnan(a, b))};
    case Opcode::kRemainder: return BinaryFn{SL_F32(std::fmod(a, b))};
    case Opcode::kNegate: return BinaryFn{SL_F32(-a)};
    case Opcode::kAbs: return BinaryFn{SL_F32(std::fabs(a))};
    case Opcode::kExp: return BinaryFn{SL_F32(std::exp(a))};
    default: return invalid_input(fmt::format("{} is not defined on floating-point values", hlo::opcode_name(op)));
  }
}

Result<BinaryFn> float64_fn(Opcode op) {
  switch (op) {
    case Opcode::kAdd: return BinaryFn{SL_F64(a + b)};
    case Opcode::kSubtract: return BinaryFn{SL_F64(a - b)};
    case Opcode::kMultiply: return BinaryFn{SL_F64(a * b)};
    case Opcode::kDivide: return BinaryFn{SL_F64(a / b)};
    case Opcode::kMaximum: return BinaryFn{SL_F64(fmaxnan(a, b))};
    case Opcode::kMinimum: return BinaryFn{SL_F64(fminnan(a, b))};
    case Opcode::kRemainder: return BinaryFn{SL_F64(std::fmod(a, b))};
    case Opcode::kNegate: return BinaryFn{SL_F64(-a)};
    case Opcode::kAbs: return BinaryFn{SL_F64(std::fabs(a))};
    case Opcode::kExp: return BinaryFn{SL_F64(std::exp(a))};
    default: return invalid_input(fmt::format("{} is not defined on floating-point values", hlo::opcode_name(op)));
  }
}

Result<BinaryFn> integer_fn(Opcode op) {
  switch (op) {
    case Opcode::kAdd: return BinaryFn{SL_INT(wrap_add(a, b))};
    case Opcode::kSubtract: return BinaryFn{SL_INT(wrap_sub(a, b))};
    case Opcode::kMultiply: return BinaryFn{SL_INT(wrap_mul(a, b))};
    case Opcode::kDivide: return BinaryFn{SL_INT(int_divide(a, b))};
    case Opcode::kRemainder: return BinaryFn{SL_INT(int_remainder(a, b))};
    case Opcode::kMaximum: return BinaryFn{SL_F64(a > b ? a : b)};
    case Opcode::kMinimum: return BinaryFn{SL_F64(a < b ? a : b)};
    case Opcode::kAnd: return BinaryFn{SL_INT(a & b)};
    case Opcode::kOr: return BinaryFn{SL_INT(a | b)};
    case Opcode::kNegate: return BinaryFn{SL_INT(wrap_sub(0, a))};
    case Opcode::kAbs: return BinaryFn{SL_INT(a < 0 ? wrap_sub(0, a) : a)};
    default: return invalid_input(fmt::format("{} is not defined on integer values", hlo::opcode_name(op)));
  }
}

// Unsigned division: x / 0 is all ones (the -1 the caller wraps), x % 0 = x.
Result<BinaryFn> unsigned_fn(Opcode op) {
  switch (op) {
    case Opcode::kDivide: return BinaryFn{SL_UINT(b == 0 ? -1.0 : static_cast<double>(a / b))};
    case Opcode::kRemainder: return BinaryFn{SL_UINT(b == 0 ? a : a % b)};
    default: return integer_fn(op);
  }
}

#undef SL_F32
#undef SL_F64
#undef SL_INT
#undef SL_UINT

// Float total order (TOTALORDER): -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
double total_order_key(double v, int* nan_rank) {
  *nan_rank = 0;
  if (std::isnan(v)) *nan_rank = std::signbit(v) ? -1 : 1;
  if (v == 0.0) return std::signbit(v) ? -std::numeric_limits<double>::denorm_min() : 0.0;
  return v;
}

bool compare_values(double a, double b, ComparisonDirection dir, bool total_order) {
  if (total_order) {
    int na = 0, nb = 0;
    double ka = total_order_key(a, &na), kb = total_order_key(b, &nb);
    int c = na != nb ? (na < nb ? -1 : 1) : (na != 0 ? 0 : (ka < kb ? -1 : (ka > kb ? 1 : 0)));
    switch (dir) {
      case ComparisonDirection::kEq: return c == 0;
      case ComparisonDirection::kNe: return c != 0;
      case ComparisonDirection::kLt: return c < 0;
      case ComparisonDirection::kLe: return c <= 0;
      case ComparisonDirection::kGt: return c > 0;
      case ComparisonDirection::kGe: return c >= 0;
    }
  }
  switch (dir) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;  // NaN != x is true
    case ComparisonDirection::kLt: return a < b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kGe: return a >= b;
  }
  return false;
}

Status check_same_count(const hlo::Instruction& inst, const Operands& operands, int64_t n) {
  for (size_t i = 0; i < operands.size(); ++i) {
    int64_t c = operands[i]->shape.element_count();
    if (c != n && c != 1) {
      return invalid_input(fmt::format("'{}': operand {} has {} elements, the result {}", inst.name, i, c, n));
    }
  }
  return ok_status();
}

// Operand value at flat index i (scalars broadcast).
inline double at(const Literal* l, size_t i) { return l->values.size() == 1 ? l->values[0] : l->values[i]; }

}  // namespace

Result<BinaryFn> binary_fn(hlo::Opcode op, hlo::PrimitiveType type) {
  switch (category(type)) {
    case Category::kNarrowFloat: return float32_fn(op);
    case Category::kF64: return float64_fn(op);
    case Category::kInteger: return hlo::is_signed_integral(type) ? integer_fn(op) : unsigned_fn(op);
  }
  return invalid_input("bad element type");
}

double convert_value(double v, hlo::PrimitiveType from, hlo::PrimitiveType to) {
  if (to == PrimitiveType::kPred) return v != 0.0 ? 1.0 : 0.0;
  if (hlo::is_integral(to) && (hlo::is_floating(from) || hlo::is_complex(from))) {
    // XLA converts float -> int saturating, NaN -> 0.
    if (std::isnan(v)) return 0.0;
    const int bits = hlo::primitive_type_bits(to);
    const bool is_signed = hlo::is_signed_integral(to);
    double lo = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
    double hi = is_signed ? std::ldexp(1.0, bits - 1) - 1.0 : std::ldexp(1.0, bits) - 1.0;
    // 2^63 - 1 and 2^64 - 1 are not doubles: the largest double below them.
    if (bits == 64) hi = std::nextafter(std::ldexp(1.0, is_signed ? 63 : 64), 0.0);
    double t = std::trunc(v);
    return t < lo ? lo : (t > hi ? hi : t);
  }
  return round_to_type(v, to);
}

Result<Literal> eval_elementwise(const hlo::Instruction& inst, const Operands& operands) {
  const hlo::Shape& shape = inst.shape;
  if (!shape.is_array()) {
    return invalid_input(fmt::format("'{}': {} needs an array result, got {}", inst.name,
                                     hlo::opcode_name(inst.opcode), hlo::to_string(shape)));
  }
  const int64_t n = shape.element_count();
  SL_RETURN_IF_ERROR(check_same_count(inst, operands, n));
  Literal out{shape, std::vector<double>(static_cast<size_t>(n))};
  const auto count = static_cast<size_t>(n);
  auto need = [&](size_t k) -> Status {
    if (operands.size() != k) {
      return invalid_input(fmt::format("'{}': {} takes {} operands, got {}", inst.name,
                                       hlo::opcode_name(inst.opcode), k, operands.size()));
    }
    return ok_status();
  };

  switch (inst.opcode) {
    case Opcode::kConvert: {
      SL_RETURN_IF_ERROR(need(1));
      PrimitiveType from = operands[0]->shape.type;
      for (size_t i = 0; i < count; ++i) out.values[i] = convert_value(at(operands[0], i), from, shape.type);
      return out;
    }
    case Opcode::kCompare: {
      SL_RETURN_IF_ERROR(need(2));
      if (!inst.comparison_direction) return invalid_input(fmt::format("'{}': compare needs direction=", inst.name));
      const bool total = inst.comparison_type == "TOTALORDER" && hlo::is_floating(operands[0]->shape.type);
      for (size_t i = 0; i < count; ++i) {
        out.values[i] = compare_values(at(operands[0], i), at(operands[1], i), *inst.comparison_direction, total) ? 1 : 0;
      }
      return out;
    }
    case Opcode::kSelect: {
      SL_RETURN_IF_ERROR(need(3));
      for (size_t i = 0; i < count; ++i) {
        out.values[i] = at(operands[0], i) != 0.0 ? at(operands[1], i) : at(operands[2], i);
      }
      return out;
    }
    case Opcode::kClamp: {
      // clamp(lo, x, hi) = min(max(x, lo), hi), NaN propagating like max/min.
      SL_RETURN_IF_ERROR(need(3));
      SL_ASSIGN_OR_RETURN(BinaryOp max, binary_op(Opcode::kMaximum, shape.type));
      SL_ASSIGN_OR_RETURN(BinaryOp min, binary_op(Opcode::kMinimum, shape.type));
      for (size_t i = 0; i < count; ++i) {
        out.values[i] = min(max(at(operands[1], i), at(operands[0], i)), at(operands[2], i));
      }
      return out;
    }
    case Opcode::kReducePrecision: {
      SL_RETURN_IF_ERROR(need(1));
      // The typed fields, or the verbatim attributes of a parser that kept them.
      auto bits = [&](const std::optional<int64_t>& typed, const char* name) -> std::optional<int> {
        if (typed) return static_cast<int>(*typed);
        auto it = inst.attributes.find(name);
        if (it == inst.attributes.end()) return std::nullopt;
        return std::atoi(it->second.c_str());
      };
      auto e = bits(inst.exponent_bits, "exponent_bits"), m = bits(inst.mantissa_bits, "mantissa_bits");
      if (!e || !m || *e < 1 || *m < 0) {
        return invalid_input(fmt::format("'{}': reduce-precision needs exponent_bits= (>= 1) and mantissa_bits=",
                                         inst.name));
      }
      for (size_t i = 0; i < count; ++i) {
        out.values[i] = round_to_type(reduce_precision(at(operands[0], i), shape.type, *e, *m), shape.type);
      }
      return out;
    }
    default:
      break;
  }
  if (hlo::is_unary_elementwise(inst.opcode)) {
    SL_RETURN_IF_ERROR(need(1));
    auto fn = unary_op(inst.opcode, operands[0]->shape.type);
    if (!fn) return invalid_input(fmt::format("'{}': {}", inst.name, fn.status().message()));
    for (size_t i = 0; i < count; ++i) out.values[i] = round_to_type((*fn)(at(operands[0], i)), shape.type);
    return out;
  }
  SL_RETURN_IF_ERROR(need(2));
  auto fn = binary_op(inst.opcode, operands[0]->shape.type);
  if (!fn) return invalid_input(fmt::format("'{}': {}", inst.name, fn.status().message()));
  for (size_t i = 0; i < count; ++i) {
    out.values[i] = round_to_type((*fn)(at(operands[0], i), at(operands[1], i)), shape.type);
  }
  return out;
}

}  // namespace sl::exec::cpu
