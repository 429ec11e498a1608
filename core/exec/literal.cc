#include "core/exec/literal.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace sl::exec {
namespace {

using hlo::PrimitiveType;

// Rounds a finite float to a narrower binary format with `mantissa_bits`
// explicit fraction bits, round-to-nearest-even, subnormals below
// 2^min_normal_exp, and overflow to infinity above `max_finite`.
enum class Overflow { kInfinity, kNan, kSaturate };

double round_float_format(float f, int mantissa_bits, int min_normal_exp, double max_finite,
                          Overflow overflow = Overflow::kInfinity) {
  if (std::isnan(f)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(f) && overflow == Overflow::kInfinity) return f;
  if (f == 0.0f) return f;
  double a = std::fabs(static_cast<double>(f));
  int exp = 0;
  std::frexp(a, &exp);  // a = m * 2^exp, m in [0.5, 1): unbiased exponent is exp - 1
  int e = std::max(exp - 1, min_normal_exp);
  double quantum = std::ldexp(1.0, e - mantissa_bits);
  // nearbyint rounds half to even in the default rounding mode; the
  // divisions by a power of two are exact.
  double r = std::isinf(a) ? a : std::nearbyint(a / quantum) * quantum;
  if (r > max_finite) {
    switch (overflow) {
      case Overflow::kInfinity: r = std::numeric_limits<double>::infinity(); break;
      case Overflow::kNan: return std::numeric_limits<double>::quiet_NaN();
      case Overflow::kSaturate: r = max_finite; break;
    }
  }
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
    case PrimitiveType::kF32: case PrimitiveType::kC64: return 24;
    case PrimitiveType::kF8E5M2: case PrimitiveType::kF8E5M2FNUZ: case PrimitiveType::kF6E3M2FN: return 3;
    case PrimitiveType::kF8E4M3: case PrimitiveType::kF8E4M3FN: case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF8E4M3B11FNUZ: case PrimitiveType::kF6E2M3FN: return 4;
    case PrimitiveType::kF8E3M4: return 5;
    case PrimitiveType::kF4E2M1FN: return 2;
    case PrimitiveType::kF8E8M0FNU: return 1;
    default: return 53;
  }
}

}  // namespace

double round_to_type(double v, hlo::PrimitiveType type) {
  const float f = static_cast<float>(v);
  switch (type) {
    case PrimitiveType::kPred:
      return v != 0.0 ? 1.0 : 0.0;
    case PrimitiveType::kF16:
      // Through f32 first, as XLA converts f64 -> f16 (and computes f16 in f32).
      return round_float_format(f, 10, -14, 65504.0);
    case PrimitiveType::kBF16:
      return round_float_format(f, 7, -126, 3.3895313892515355e38);
    case PrimitiveType::kF32:
    case PrimitiveType::kC64:  // complex values keep their real part only
      return static_cast<double>(f);
    case PrimitiveType::kF64:
    case PrimitiveType::kC128:
      return v;
    // The small float formats as ml_dtypes defines them: explicit fraction
    // bits, the smallest normal exponent, the largest finite value, and what
    // an overflow becomes (the `fn` kinds have no infinity).
    case PrimitiveType::kF8E5M2: return round_float_format(f, 2, -14, 57344.0);
    case PrimitiveType::kF8E4M3: return round_float_format(f, 3, -6, 240.0);
    case PrimitiveType::kF8E4M3FN: return round_float_format(f, 3, -6, 448.0, Overflow::kNan);
    case PrimitiveType::kF8E4M3FNUZ: return round_float_format(f, 3, -7, 240.0, Overflow::kNan);
    case PrimitiveType::kF8E4M3B11FNUZ: return round_float_format(f, 3, -10, 30.0, Overflow::kNan);
    case PrimitiveType::kF8E5M2FNUZ: return round_float_format(f, 2, -15, 57344.0, Overflow::kNan);
    case PrimitiveType::kF8E3M4: return round_float_format(f, 4, -2, 15.5);
    case PrimitiveType::kF6E2M3FN: return round_float_format(f, 3, 0, 7.5, Overflow::kSaturate);
    case PrimitiveType::kF6E3M2FN: return round_float_format(f, 2, -2, 28.0, Overflow::kSaturate);
    case PrimitiveType::kF4E2M1FN: return round_float_format(f, 1, 0, 6.0, Overflow::kSaturate);
    case PrimitiveType::kF8E8M0FNU: {
      // Powers of two only, no zero and no sign: round the exponent.
      if (!(v > 0.0) || std::isinf(v)) return std::numeric_limits<double>::quiet_NaN();
      return std::ldexp(1.0, std::clamp(static_cast<int>(std::lround(std::log2(v))), -127, 127));
    }
    case PrimitiveType::kToken:
    case PrimitiveType::kTuple:
    case PrimitiveType::kOpaque:
      return 0.0;
    default:
      break;
  }
  if (hlo::is_integral(type)) {
    return wrap_integer(v, hlo::primitive_type_bits(type), hlo::is_signed_integral(type));
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
