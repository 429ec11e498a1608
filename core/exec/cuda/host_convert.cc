#include "core/exec/cuda/host_convert.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>

namespace sl::exec::cuda {

using hlo::PrimitiveType;

namespace {

template <typename T>
void put(std::vector<uint8_t>& out, size_t i, T v) {
  std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
}
template <typename T>
T get(const uint8_t* bytes, size_t i) {
  T v;
  std::memcpy(&v, bytes + i * sizeof(T), sizeof(T));
  return v;
}

}  // namespace

std::vector<uint8_t> encode_literal(const Literal& literal) {
  const PrimitiveType t = literal.shape.type;
  const size_t n = static_cast<size_t>(literal.shape.element_count());
  std::vector<uint8_t> out(n * static_cast<size_t>(hlo::primitive_type_bytes(t)));
  for (size_t i = 0; i < n; ++i) {
    // A one-value literal fills the array (scalar constants broadcast).
    double v = literal.values.empty() ? 0.0 : literal.values[literal.values.size() == 1 ? 0 : i];
    v = round_to_type(v, t);
    switch (t) {
      case PrimitiveType::kPred: put<uint8_t>(out, i, v != 0.0 ? 1 : 0); break;
      case PrimitiveType::kS8: put<int8_t>(out, i, static_cast<int8_t>(v)); break;
      case PrimitiveType::kS32: put<int32_t>(out, i, static_cast<int32_t>(v)); break;
      case PrimitiveType::kU32: put<uint32_t>(out, i, static_cast<uint32_t>(v)); break;
      case PrimitiveType::kS64: put<int64_t>(out, i, static_cast<int64_t>(v)); break;
      case PrimitiveType::kF16: put<__half>(out, i, __float2half_rn(static_cast<float>(v))); break;
      case PrimitiveType::kBF16: put<__nv_bfloat16>(out, i, __float2bfloat16_rn(static_cast<float>(v))); break;
      case PrimitiveType::kF32: put<float>(out, i, static_cast<float>(v)); break;
      case PrimitiveType::kF64: put<double>(out, i, v); break;
      default: break;
    }
  }
  return out;
}

Literal decode_literal(const hlo::Shape& shape, const uint8_t* bytes) {
  Literal l{shape, {}};
  const size_t n = static_cast<size_t>(shape.element_count());
  l.values.resize(n);
  for (size_t i = 0; i < n; ++i) {
    double v = 0.0;
    switch (shape.type) {
      case PrimitiveType::kPred: v = get<uint8_t>(bytes, i) ? 1.0 : 0.0; break;
      case PrimitiveType::kS8: v = get<int8_t>(bytes, i); break;
      case PrimitiveType::kS32: v = get<int32_t>(bytes, i); break;
      case PrimitiveType::kU32: v = get<uint32_t>(bytes, i); break;
      case PrimitiveType::kS64: v = static_cast<double>(get<int64_t>(bytes, i)); break;
      case PrimitiveType::kF16: v = __half2float(get<__half>(bytes, i)); break;
      case PrimitiveType::kBF16: v = __bfloat162float(get<__nv_bfloat16>(bytes, i)); break;
      case PrimitiveType::kF32: v = get<float>(bytes, i); break;
      case PrimitiveType::kF64: v = get<double>(bytes, i); break;
      default: break;
    }
    l.values[i] = v;
  }
  return l;
}

}  // namespace sl::exec::cuda
