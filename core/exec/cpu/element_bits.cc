#include "core/exec/cpu/element_bits.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/exec/literal.h"

namespace sl::exec::cpu {
namespace {

using hlo::PrimitiveType;

// How a float format spends its special encodings (ml_dtypes' kinds).
enum class Special {
  kIeee,   // exponent all ones: infinity (zero fraction) or NaN
  kFn,     // no infinity; all ones (exponent and fraction) is NaN
  kNone,   // f6/f4: every pattern is a finite number
  kFnuz,   // no infinity, no -0; the pattern of -0 is the only NaN
};

struct FloatFormat {
  int exponent_bits = 0;
  int mantissa_bits = 0;
  int bias = 0;
  Special special = Special::kIeee;
};

bool float_format(PrimitiveType type, FloatFormat* f) {
  switch (type) {
    case PrimitiveType::kF16: *f = {5, 10, 15, Special::kIeee}; return true;
    case PrimitiveType::kBF16: *f = {8, 7, 127, Special::kIeee}; return true;
    case PrimitiveType::kF8E5M2: *f = {5, 2, 15, Special::kIeee}; return true;
    case PrimitiveType::kF8E4M3: *f = {4, 3, 7, Special::kIeee}; return true;
    case PrimitiveType::kF8E3M4: *f = {3, 4, 3, Special::kIeee}; return true;
    case PrimitiveType::kF8E4M3FN: *f = {4, 3, 7, Special::kFn}; return true;
    case PrimitiveType::kF8E4M3FNUZ: *f = {4, 3, 8, Special::kFnuz}; return true;
    case PrimitiveType::kF8E5M2FNUZ: *f = {5, 2, 16, Special::kFnuz}; return true;
    case PrimitiveType::kF8E4M3B11FNUZ: *f = {4, 3, 11, Special::kFnuz}; return true;
    case PrimitiveType::kF6E2M3FN: *f = {2, 3, 1, Special::kNone}; return true;
    case PrimitiveType::kF6E3M2FN: *f = {3, 2, 3, Special::kNone}; return true;
    case PrimitiveType::kF4E2M1FN: *f = {2, 1, 1, Special::kNone}; return true;
    default: return false;
  }
}

double decode_small_float(uint64_t code, const FloatFormat& f) {
  const int m = f.mantissa_bits, e = f.exponent_bits;
  const uint64_t sign = (code >> (e + m)) & 1;
  const uint64_t exponent = (code >> m) & low_mask(e);
  const uint64_t mantissa = code & low_mask(m);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.special) {
    case Special::kIeee:
      if (exponent == low_mask(e)) return mantissa == 0 ? (sign ? -INFINITY : INFINITY) : nan;
      break;
    case Special::kFn:
      if (exponent == low_mask(e) && mantissa == low_mask(m)) return nan;
      break;
    case Special::kFnuz:
      if (sign && exponent == 0 && mantissa == 0) return nan;
      break;
    case Special::kNone:
      break;
  }
  double magnitude = exponent == 0
                         ? std::ldexp(static_cast<double>(mantissa), 1 - f.bias - m)
                         : std::ldexp(static_cast<double>(mantissa | (uint64_t{1} << m)),
                                      static_cast<int>(exponent) - f.bias - m);
  return sign ? -magnitude : magnitude;
}

uint64_t encode_small_float(double v, const FloatFormat& f) {
  const int m = f.mantissa_bits, e = f.exponent_bits;
  const uint64_t sign_bit = uint64_t{1} << (e + m);
  if (std::isnan(v)) {
    switch (f.special) {
      case Special::kIeee: return (low_mask(e) << m) | (uint64_t{1} << (m - 1));
      case Special::kFn: return low_mask(e + m);
      case Special::kFnuz: return sign_bit;
      case Special::kNone: return 0;
    }
  }
  const uint64_t sign = std::signbit(v) && !(f.special == Special::kFnuz && v == 0.0) ? sign_bit : 0;
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | (low_mask(e) << m);
  if (a == 0.0) return sign;
  int exp = 0;
  std::frexp(a, &exp);  // a in [2^(exp-1), 2^exp)
  int unbiased = exp - 1;
  if (unbiased < 1 - f.bias) {  // subnormal
    return sign | static_cast<uint64_t>(std::ldexp(a, f.bias - 1 + m));
  }
  const auto fraction = static_cast<uint64_t>(std::ldexp(a, m - unbiased)) & low_mask(m);
  return sign | (static_cast<uint64_t>(unbiased + f.bias) << m) | fraction;
}

}  // namespace

uint64_t integer_bits(double value) {
  if (value >= 9223372036854775808.0) return static_cast<uint64_t>(value);
  return static_cast<uint64_t>(static_cast<int64_t>(value));
}

uint64_t encode_bits(double value, PrimitiveType type) {
  const int bits = hlo::primitive_type_bits(type);
  if (type == PrimitiveType::kPred) return value != 0.0 ? 1 : 0;
  if (hlo::is_integral(type)) return integer_bits(value) & low_mask(bits);
  if (type == PrimitiveType::kF32 || type == PrimitiveType::kC64) {
    float f = static_cast<float>(value);
    uint32_t u = 0;
    std::memcpy(&u, &f, sizeof u);
    return u;
  }
  if (type == PrimitiveType::kF64 || type == PrimitiveType::kC128) {
    uint64_t u = 0;
    std::memcpy(&u, &value, sizeof u);
    return u;
  }
  if (type == PrimitiveType::kF8E8M0FNU) {
    if (!(value > 0.0) || std::isinf(value)) return 0xFF;
    return static_cast<uint64_t>(std::ilogb(value) + 127) & 0xFF;
  }
  FloatFormat f;
  if (float_format(type, &f)) return encode_small_float(round_to_type(value, type), f);
  return 0;
}

double decode_bits(uint64_t bits, PrimitiveType type) {
  const int width = hlo::primitive_type_bits(type);
  bits &= low_mask(width);
  if (type == PrimitiveType::kPred) return bits != 0 ? 1.0 : 0.0;
  if (hlo::is_signed_integral(type)) {
    if (width < 64 && (bits >> (width - 1)) != 0) bits |= ~low_mask(width);
    return static_cast<double>(static_cast<int64_t>(bits));
  }
  if (hlo::is_integral(type)) return static_cast<double>(bits);
  if (type == PrimitiveType::kF32 || type == PrimitiveType::kC64) {
    auto u = static_cast<uint32_t>(bits);
    float f = 0;
    std::memcpy(&f, &u, sizeof f);
    return static_cast<double>(f);
  }
  if (type == PrimitiveType::kF64 || type == PrimitiveType::kC128) {
    double d = 0;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  if (type == PrimitiveType::kF8E8M0FNU) {
    if (bits == 0xFF) return std::numeric_limits<double>::quiet_NaN();
    return std::ldexp(1.0, static_cast<int>(bits) - 127);
  }
  FloatFormat f;
  if (float_format(type, &f)) return decode_small_float(bits, f);
  return 0.0;
}

Result<Literal> eval_bitcast_convert(const hlo::Shape& shape, const Literal& operand) {
  const int in_bits = hlo::primitive_type_bits(operand.shape.type);
  const int out_bits = hlo::primitive_type_bits(shape.type);
  const auto bad = [&] {
    return invalid_input(fmt::format("bitcast-convert cannot turn {} into {}", hlo::to_string(operand.shape),
                                     hlo::to_string(shape)));
  };
  if (!shape.is_array() || in_bits <= 0 || out_bits <= 0) return bad();
  Literal out{shape, std::vector<double>(static_cast<size_t>(shape.element_count()))};
  // XLA reinterprets memory on a little-endian host: a wide element splits
  // into a new minor dimension, least significant part first.
  if (in_bits == out_bits) {
    if (shape.dims != operand.shape.dims) return bad();
    for (size_t i = 0; i < out.values.size(); ++i) {
      out.values[i] = decode_bits(encode_bits(operand.values[i], operand.shape.type), shape.type);
    }
  } else if (in_bits > out_bits) {
    const auto ratio = static_cast<size_t>(in_bits / out_bits);
    std::vector<int64_t> dims = operand.shape.dims;
    dims.push_back(static_cast<int64_t>(ratio));
    if (in_bits % out_bits != 0 || dims != shape.dims) return bad();
    for (size_t i = 0; i < operand.values.size(); ++i) {
      const uint64_t bits = encode_bits(operand.values[i], operand.shape.type);
      for (size_t k = 0; k < ratio; ++k) {
        out.values[i * ratio + k] = decode_bits(bits >> (k * static_cast<size_t>(out_bits)), shape.type);
      }
    }
  } else {
    const auto ratio = static_cast<size_t>(out_bits / in_bits);
    std::vector<int64_t> dims = shape.dims;
    dims.push_back(static_cast<int64_t>(ratio));
    if (out_bits % in_bits != 0 || dims != operand.shape.dims) return bad();
    for (size_t i = 0; i < out.values.size(); ++i) {
      uint64_t bits = 0;
      for (size_t k = 0; k < ratio; ++k) {
        bits |= encode_bits(operand.values[i * ratio + k], operand.shape.type) << (k * static_cast<size_t>(in_bits));
      }
      out.values[i] = decode_bits(bits, shape.type);
    }
  }
  return out;
}

}  // namespace sl::exec::cpu
