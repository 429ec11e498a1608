// Element types in generated kernels (codegen_types.h).

#include "core/exec/codegen/codegen_types.h"

#include <fmt/format.h>

#include <cmath>

namespace sl::exec::codegen {

using hlo::PrimitiveType;

Result<TypeNames> type_names(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred: return TypeNames{"bool", "unsigned char"};
    case PrimitiveType::kS8: return TypeNames{"int", "signed char"};
    case PrimitiveType::kS16: return TypeNames{"int", "short"};
    case PrimitiveType::kS32: return TypeNames{"int", "int"};
    case PrimitiveType::kS64: return TypeNames{"long long", "long long"};
    case PrimitiveType::kU8: return TypeNames{"unsigned", "unsigned char"};
    case PrimitiveType::kU16: return TypeNames{"unsigned", "unsigned short"};
    case PrimitiveType::kU32: return TypeNames{"unsigned", "unsigned"};
    case PrimitiveType::kU64: return TypeNames{"unsigned long long", "unsigned long long"};
    case PrimitiveType::kF16: return TypeNames{"float", "unsigned short"};
    case PrimitiveType::kBF16: return TypeNames{"float", "unsigned short"};
    case PrimitiveType::kF32: return TypeNames{"float", "float"};
    case PrimitiveType::kF64: return TypeNames{"double", "double"};
    default:
      return runtime_error(fmt::format("element type {} has no generated kernels", hlo::primitive_type_name(type)));
  }
}

std::string load_value(PrimitiveType type, const std::string& element) {
  switch (type) {
    case PrimitiveType::kPred: return fmt::format("({} != 0)", element);
    case PrimitiveType::kF16: return fmt::format("sl_f16_to_f32({})", element);
    case PrimitiveType::kBF16: return fmt::format("sl_bf16_to_f32({})", element);
    default: {
      auto names = type_names(type);
      return names.is_ok() ? fmt::format("(({}){})", names->compute, element) : element;
    }
  }
}

std::string store_value(PrimitiveType type, const std::string& value) {
  switch (type) {
    case PrimitiveType::kF16: return fmt::format("sl_f32_to_f16({})", value);
    case PrimitiveType::kBF16: return fmt::format("sl_f32_to_bf16({})", value);
    default: {
      auto names = type_names(type);
      return names.is_ok() ? fmt::format("(({}){})", names->storage, value) : value;
    }
  }
}

std::string round_to(PrimitiveType type, const std::string& value) {
  switch (type) {
    case PrimitiveType::kPred: return fmt::format("((bool)({}))", value);
    case PrimitiveType::kS8: return fmt::format("((int)(signed char)({}))", value);
    case PrimitiveType::kS16: return fmt::format("((int)(short)({}))", value);
    case PrimitiveType::kU8: return fmt::format("((unsigned)(unsigned char)({}))", value);
    case PrimitiveType::kU16: return fmt::format("((unsigned)(unsigned short)({}))", value);
    case PrimitiveType::kF16: return fmt::format("sl_round_f16({})", value);
    case PrimitiveType::kBF16: return fmt::format("sl_round_bf16({})", value);
    default: {
      auto names = type_names(type);
      return names.is_ok() ? fmt::format("(({})({}))", names->compute, value) : value;
    }
  }
}

std::string literal_value(PrimitiveType type, double v) {
  if (type == PrimitiveType::kPred) return v != 0.0 ? "true" : "false";
  if (hlo::is_floating(type)) {
    const bool f64 = type == PrimitiveType::kF64;
    std::string text;
    if (std::isnan(v)) {
      text = f64 ? "__longlong_as_double(0x7ff8000000000000LL)" : "__int_as_float(0x7fc00000)";
    } else if (std::isinf(v)) {
      const char* sign = v < 0 ? "-" : "";
      text = f64 ? fmt::format("({}__longlong_as_double(0x7ff0000000000000LL))", sign)
                 : fmt::format("({}__int_as_float(0x7f800000))", sign);
    } else {
      std::string digits = f64 ? fmt::format("{:.17g}", v) : fmt::format("{:.9g}", static_cast<float>(v));
      if (digits.find_first_of(".e") == std::string::npos) digits += ".0";  // "0f" is no float literal
      text = "(" + digits + (f64 ? ")" : "f)");
    }
    if (type == PrimitiveType::kF16 || type == PrimitiveType::kBF16) return round_to(type, text);
    return text;
  }
  if (hlo::is_signed_integral(type)) return round_to(type, fmt::format("({}LL)", static_cast<long long>(v)));
  return round_to(type, fmt::format("({}ULL)", static_cast<unsigned long long>(v)));
}

std::string convert_value(PrimitiveType from, PrimitiveType to, const std::string& value) {
  if (to == PrimitiveType::kPred) return fmt::format("({} != 0)", value);
  if (hlo::is_integral(to) && hlo::is_floating(from)) {
    const int bits = hlo::primitive_type_bits(to);
    const bool is_signed = hlo::is_signed_integral(to);
    const double lo = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
    const double hi = bits == 64 ? std::nextafter(std::ldexp(1.0, is_signed ? 63 : 64), 0.0)
                                 : (is_signed ? std::ldexp(1.0, bits - 1) - 1.0 : std::ldexp(1.0, bits) - 1.0);
    auto names = type_names(to);
    const std::string ct = names.is_ok() ? names->compute : "long long";
    return fmt::format("sl_saturate<{}>((double)({}), {:.17g}, {:.17g})", ct, value, lo, hi);
  }
  if (from == PrimitiveType::kPred) return round_to(to, fmt::format("({} ? 1 : 0)", value));
  return round_to(to, value);
}

const char* const kPrelude = R"(// Generated by streamlens (core/exec/codegen): one kernel per fusion.
__device__ __forceinline__ float sl_bf16_to_f32(unsigned short b) { return __uint_as_float(((unsigned)b) << 16); }
__device__ __forceinline__ unsigned short sl_f32_to_bf16(float f) {
  unsigned short r; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f)); return r;
}
__device__ __forceinline__ float sl_f16_to_f32(unsigned short h) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
__device__ __forceinline__ unsigned short sl_f32_to_f16(float f) {
  unsigned short r; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f)); return r;
}
__device__ __forceinline__ float sl_round_bf16(float f) { return sl_bf16_to_f32(sl_f32_to_bf16(f)); }
__device__ __forceinline__ float sl_round_f16(float f) { return sl_f16_to_f32(sl_f32_to_f16(f)); }
template <typename T> __device__ __forceinline__ T sl_max(T a, T b) { return a > b ? a : b; }
template <typename T> __device__ __forceinline__ T sl_min(T a, T b) { return a < b ? a : b; }
__device__ __forceinline__ float sl_max(float a, float b) { return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b); }
__device__ __forceinline__ float sl_min(float a, float b) { return (a != a || b != b) ? __int_as_float(0x7fc00000) : fminf(a, b); }
__device__ __forceinline__ double sl_max(double a, double b) { return (a != a || b != b) ? __longlong_as_double(0x7ff8000000000000LL) : fmax(a, b); }
__device__ __forceinline__ double sl_min(double a, double b) { return (a != a || b != b) ? __longlong_as_double(0x7ff8000000000000LL) : fmin(a, b); }
template <typename T> __device__ __forceinline__ T sl_saturate(double x, double lo, double hi) {
  return x != x ? (T)0 : (x <= lo ? (T)lo : (x >= hi ? (T)hi : (T)x));
}
// XLA: x / 0 = -1 (all ones unsigned), INT_MIN / -1 = INT_MIN; x % 0 = x, INT_MIN % -1 = 0.
template <typename T> __device__ __forceinline__ T sl_idiv(T a, T b) {
  if (b == 0) return (T)-1;
  if ((T)-1 < (T)0 && b == (T)-1) return (T)(0ULL - (unsigned long long)a);
  return a / b;
}
template <typename T> __device__ __forceinline__ T sl_irem(T a, T b) {
  if (b == 0) return a;
  if ((T)-1 < (T)0 && b == (T)-1) return (T)0;
  return a % b;
}
__device__ __forceinline__ int sl_total_key(float x) { int k = __float_as_int(x); return k ^ ((k >> 31) & 0x7fffffff); }
__device__ __forceinline__ long long sl_total_key(double x) {
  long long k = __double_as_longlong(x); return k ^ ((k >> 63) & 0x7fffffffffffffffLL);
}
template <typename T> __device__ __forceinline__ T sl_total_key(T x) { return x; }
__device__ __forceinline__ long long sl_clamp_start(long long s, long long hi) { return s < 0 ? 0 : (s > hi ? hi : s); }
template <typename T> __device__ __forceinline__ T sl_sign(T x) { return x > (T)0 ? (T)1 : (x < (T)0 ? (T)-1 : x); }
__device__ __forceinline__ int sl_shfl(bool v, int lane) { return __shfl_xor_sync(0xffffffffu, (int)v, lane); }
template <typename T> __device__ __forceinline__ T sl_shfl(T v, int lane) { return __shfl_xor_sync(0xffffffffu, v, lane); }
)";

}  // namespace sl::exec::codegen
