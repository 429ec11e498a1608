#include "core/exec/literal.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace sl::exec {
namespace {

using hlo::PrimitiveType;

// Rounds a finite float to a narrower binary format with `mantissa_bits`
// explicit fraction bits, round-to-nearest-even, subnormals below
// 2^min_normal_exp, and overflow to infinity above `max_finite`.
double round_float_format(float f, int mantissa_bits, int min_normal_exp, double max_finite) {
  if (std::isnan(f)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(f) || f == 0.0f) return f;
  double a = std::fabs(static_cast<double>(f));
  int exp = 0;
  std::frexp(a, &exp);  // a = m * 2^exp, m in [0.5, 1): unbiased exponent is exp - 1
  int e = std::max(exp - 1, min_normal_exp);
  double quantum = std::ldexp(1.0, e - mantissa_bits);
  // nearbyint rounds half to even in the default rounding mode; the
  // divisions by a power of two are exact.
  double r = std::nearbyint(a / quantum) * quantum;
  if (r > max_finite) r = std::numeric_limits<double>::infinity();
  return std::signbit(f) ? -r : r;
}

// Two's-complement wraparound of the truncated value to `bits` bits.
double wrap_integer(double v, int bits, bool is_signed) {
  if (!std::isfinite(v)) return 0.0;
  double t = std::trunc(v);
  double modulus = std::ldexp(1.0, bits);
  // fmod is exact; each correction below is exact too, even for 64 bits
  // (adding 2^64 to a value near -2^64 would not be, so signed types fold
  // into [-2^(n-1), 2^(n-1)) directly).
  double r = std::fmod(t, modulus);
  if (is_signed) {
    if (r >= modulus / 2) r -= modulus;
    else if (r < -modulus / 2) r += modulus;
  } else if (r < 0) {
    r += modulus;
  }
  return r;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += kSplitmix64Gamma);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Significand precision (bits, implicit one included) of each float type.
int precision_bits(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kBF16: return 8;
    case PrimitiveType::kF16: return 11;
    case PrimitiveType::kF32: return 24;
    default: return 53;
  }
}

}  // namespace

double round_to_type(double v, hlo::PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred:
      return v != 0.0 ? 1.0 : 0.0;
    case PrimitiveType::kS8:
      return wrap_integer(v, 8, true);
    case PrimitiveType::kS32:
      return wrap_integer(v, 32, true);
    case PrimitiveType::kU32:
      return wrap_integer(v, 32, false);
    case PrimitiveType::kS64:
      return wrap_integer(v, 64, true);
    case PrimitiveType::kF16:
      // Through f32 first, as XLA converts f64 -> f16 (and computes f16 in f32).
      return round_float_format(static_cast<float>(v), 10, -14, 65504.0);
    case PrimitiveType::kBF16:
      return round_float_format(static_cast<float>(v), 7, -126, 3.3895313892515355e38);
    case PrimitiveType::kF32:
      return static_cast<double>(static_cast<float>(v));
    case PrimitiveType::kF64:
      return v;
    case PrimitiveType::kToken:
    case PrimitiveType::kTuple:
      return 0.0;
  }
  return v;
}

Literal ramp_literal(const hlo::Shape& shape, int64_t device, int64_t parameter) {
  Literal out{shape, {}};
  const int64_t n = shape.element_count();
  out.values.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    // Reduce each term first so large element counts cannot overflow.
    int64_t m = ((device % 11) * 7 + (parameter % 11) * 3 + i % 11) % 11;
    double v = static_cast<double>(m - 5);
    if (shape.type == PrimitiveType::kPred) {
      v = (m - 5) % 2 != 0 ? 1.0 : 0.0;  // odd -> true
    }
    out.values[static_cast<size_t>(i)] = round_to_type(v, shape.type);
  }
  return out;
}

uint64_t random_stream_start(uint64_t seed, int64_t device, int64_t parameter) {
  // One stream per (seed, device, parameter); splitmix64 is fully specified,
  // so every platform draws the same values.
  uint64_t state = seed;
  splitmix64(state);
  state ^= static_cast<uint64_t>(device) * 0xD1B54A32D192ED03ull;
  splitmix64(state);
  state ^= static_cast<uint64_t>(parameter) * 0x8CB92BA72F3D8DD7ull;
  return state;
}

int random_fraction_bits(hlo::PrimitiveType type) {
  return hlo::is_floating(type) ? precision_bits(type) : 53;
}

Literal random_literal(const hlo::Shape& shape, uint64_t seed, int64_t device, int64_t parameter) {
  Literal out{shape, {}};
  const int64_t n = shape.element_count();
  out.values.resize(static_cast<size_t>(n));
  uint64_t state = random_stream_start(seed, device, parameter);
  const int bits = random_fraction_bits(shape.type);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = splitmix64(state);
    // u on a grid of 2^-bits in [0, 1): 2u - 1 is exactly representable in the
    // type, so the value stays in [-1, 1) after rounding.
    double u = std::ldexp(static_cast<double>(r >> (64 - bits)), -bits);
    double v = 2.0 * u - 1.0;
    double value = 0.0;
    if (shape.type == PrimitiveType::kPred) {
      value = u < 0.5 ? 1.0 : 0.0;
    } else if (hlo::is_integral(shape.type)) {
      value = round_to_type(std::floor(v), shape.type);  // -1 or 0
    } else {
      value = round_to_type(v, shape.type);
    }
    out.values[static_cast<size_t>(i)] = value;
  }
  return out;
}

}  // namespace sl::exec
