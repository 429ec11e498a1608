#include "core/exec/cuda/kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/exec/cuda/fast_paths.h"

namespace sl::exec::cuda {
namespace {

using fast::blocks_for;
using fast::kThreads;
// Element type numbers: hlo::PrimitiveType values.
using fast::kPred, fast::kS8, fast::kS32, fast::kU32, fast::kS64, fast::kF16, fast::kBF16, fast::kF32, fast::kF64;

__device__ double load(const void* p, int t, int64_t i) {
  switch (t) {
    case kPred: return static_cast<const uint8_t*>(p)[i] ? 1.0 : 0.0;
    case kS8: return static_cast<const int8_t*>(p)[i];
    case kS32: return static_cast<const int32_t*>(p)[i];
    case kU32: return static_cast<const uint32_t*>(p)[i];
    case kS64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case kF16: return __half2float(static_cast<const __half*>(p)[i]);
    case kBF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case kF32: return static_cast<const float*>(p)[i];
    default: return static_cast<const double*>(p)[i];
  }
}

// Two's-complement wrap of the truncated value, as round_to_type on the host.
__device__ int64_t wrap64(double v) {
  if (!isfinite(v)) return 0;
  double t = trunc(v);
  if (fabs(t) < 9.2233720368547758e18) return static_cast<int64_t>(t);
  double r = fmod(t, 18446744073709551616.0);
  if (r < 0) r += 18446744073709551616.0;
  return static_cast<int64_t>(static_cast<uint64_t>(r));
}

__device__ void store(void* p, int t, int64_t i, double v) {
  switch (t) {
    case kPred: static_cast<uint8_t*>(p)[i] = v != 0.0 ? 1 : 0; break;
    case kS8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(wrap64(v)); break;
    case kS32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(wrap64(v)); break;
    case kU32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(wrap64(v)); break;
    case kS64: static_cast<int64_t*>(p)[i] = wrap64(v); break;
    case kF16: static_cast<__half*>(p)[i] = __float2half_rn(static_cast<float>(v)); break;
    case kBF16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(static_cast<float>(v)); break;
    case kF32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    default: static_cast<double*>(p)[i] = v; break;
  }
}

__device__ double to_type(double v, int t) {
  switch (t) {
    case kPred: return v != 0.0 ? 1.0 : 0.0;
    case kS8: return static_cast<int8_t>(wrap64(v));
    case kS32: return static_cast<int32_t>(wrap64(v));
    case kU32: return static_cast<uint32_t>(wrap64(v));
    case kS64: return static_cast<double>(wrap64(v));
    case kF16: return __half2float(__float2half_rn(static_cast<float>(v)));
    case kBF16: return __bfloat162float(__float2bfloat16_rn(static_cast<float>(v)));
    case kF32: return static_cast<float>(v);
    default: return v;
  }
}

__device__ bool is_narrow_float(int t) { return t == kF16 || t == kBF16 || t == kF32; }

__device__ double nan_max(double a, double b) { return (isnan(a) || isnan(b)) ? nan("") : (a > b ? a : b); }
__device__ double nan_min(double a, double b) { return (isnan(a) || isnan(b)) ? nan("") : (a < b ? a : b); }

__device__ int64_t int_divide(int64_t a, int64_t b) {
  if (b == 0) return -1;
  if (b == -1) return static_cast<int64_t>(0ull - static_cast<uint64_t>(a));
  return a / b;
}
__device__ int64_t int_remainder(int64_t a, int64_t b) {
  if (b == 0) return a;
  if (b == -1) return 0;
  return a % b;
}

// One binary/unary op in the type's compute category.
__device__ double apply(EwOp op, int t, double x, double y) {
  if (is_narrow_float(t)) {
    float a = static_cast<float>(x), b = static_cast<float>(y);
    switch (op) {
      case EwOp::kAdd: return a + b;
      case EwOp::kSubtract: return a - b;
      case EwOp::kMultiply: return a * b;
      case EwOp::kDivide: return a / b;
      case EwOp::kMaximum: return nan_max(a, b);
      case EwOp::kMinimum: return nan_min(a, b);
      case EwOp::kRemainder: return fmodf(a, b);
      case EwOp::kNegate: return -a;
      case EwOp::kAbs: return fabsf(a);
      case EwOp::kExp: return expf(a);
      default: return a;
    }
  }
  if (t == kF64) {
    switch (op) {
      case EwOp::kAdd: return x + y;
      case EwOp::kSubtract: return x - y;
      case EwOp::kMultiply: return x * y;
      case EwOp::kDivide: return x / y;
      case EwOp::kMaximum: return nan_max(x, y);
      case EwOp::kMinimum: return nan_min(x, y);
      case EwOp::kRemainder: return fmod(x, y);
      case EwOp::kNegate: return -x;
      case EwOp::kAbs: return fabs(x);
      case EwOp::kExp: return exp(x);
      default: return x;
    }
  }
  int64_t a = wrap64(x), b = wrap64(y);
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  switch (op) {
    case EwOp::kAdd: return static_cast<double>(static_cast<int64_t>(u(a) + u(b)));
    case EwOp::kSubtract: return static_cast<double>(static_cast<int64_t>(u(a) - u(b)));
    case EwOp::kMultiply: return static_cast<double>(static_cast<int64_t>(u(a) * u(b)));
    case EwOp::kDivide: return static_cast<double>(int_divide(a, b));
    case EwOp::kRemainder: return static_cast<double>(int_remainder(a, b));
    case EwOp::kMaximum: return static_cast<double>(a > b ? a : b);
    case EwOp::kMinimum: return static_cast<double>(a < b ? a : b);
    case EwOp::kAnd: return static_cast<double>(a & b);
    case EwOp::kOr: return static_cast<double>(a | b);
    case EwOp::kNegate: return static_cast<double>(static_cast<int64_t>(0ull - u(a)));
    case EwOp::kAbs: return static_cast<double>(a < 0 ? static_cast<int64_t>(0ull - u(a)) : a);
    default: return x;
  }
}

// Total order key as the cpu backend: -NaN < -inf < ... < -0 < +0 < ... < NaN.
__device__ int total_compare(double a, double b) {
  int na = isnan(a) ? (signbit(a) ? -1 : 1) : 0;
  int nb = isnan(b) ? (signbit(b) ? -1 : 1) : 0;
  if (na != nb) return na < nb ? -1 : 1;
  if (na != 0) return 0;
  double ka = a == 0.0 ? (signbit(a) ? -4.9406564584124654e-324 : 0.0) : a;
  double kb = b == 0.0 ? (signbit(b) ? -4.9406564584124654e-324 : 0.0) : b;
  return ka < kb ? -1 : (ka > kb ? 1 : 0);
}

__device__ bool compare(double a, double b, int direction, bool total_order) {
  // hlo::ComparisonDirection: kEq, kNe, kLt, kLe, kGt, kGe
  if (total_order) {
    int c = total_compare(a, b);
    switch (direction) {
      case 0: return c == 0;
      case 1: return c != 0;
      case 2: return c < 0;
      case 3: return c <= 0;
      case 4: return c > 0;
      default: return c >= 0;
    }
  }
  switch (direction) {
    case 0: return a == b;
    case 1: return a != b;
    case 2: return a < b;
    case 3: return a <= b;
    case 4: return a > b;
    default: return a >= b;
  }
}

__device__ int64_t clamp_start(const DynamicStarts& dyn, int d) {
  double v = load(dyn.index[d], dyn.index_type[d], 0);
  int64_t s = wrap64(v);
  if (s < 0) s = 0;
  if (s > dyn.limit[d]) s = dyn.limit[d];
  return s;
}

__global__ void strided_copy_kernel(void* dst, int dst_type, View dv, const void* src, int src_type, View sv,
                                    DynamicStarts dyn, int64_t n) {
  int64_t dyn_offset = 0;
  const View& moved = dyn.apply_to_dst ? dv : sv;
  for (int d = 0; d < dyn.count; ++d) dyn_offset += clamp_start(dyn, d) * moved.strides[d];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, so = sv.offset, doff = dv.offset;
    for (int d = dv.rank - 1; d >= 0; --d) {
      int64_t idx = rest % dv.dims[d];
      rest /= dv.dims[d];
      so += idx * sv.strides[d];
      doff += idx * dv.strides[d];
    }
    if (dyn.apply_to_dst) doff += dyn_offset; else so += dyn_offset;
    store(dst, dst_type, doff, load(src, src_type, so));
  }
}

__global__ void elementwise_kernel(EwOp op, int t, int out_type, void* out, int64_t n, const void* a, int64_t na,
                                   const void* b, int64_t nb, const void* c, int64_t nc, int direction,
                                   bool total_order) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double r;
    if (op == EwOp::kSelect) {
      bool p = load(a, kPred, na == 1 ? 0 : i) != 0.0;
      r = p ? load(b, t, nb == 1 ? 0 : i) : load(c, t, nc == 1 ? 0 : i);
    } else if (op == EwOp::kCompare) {
      r = compare(load(a, t, na == 1 ? 0 : i), load(b, t, nb == 1 ? 0 : i), direction, total_order) ? 1.0 : 0.0;
    } else if (op == EwOp::kConvert) {
      r = load(a, t, na == 1 ? 0 : i);
    } else {
      double x = load(a, t, na == 1 ? 0 : i);
      double y = b ? load(b, t, nb == 1 ? 0 : i) : 0.0;
      r = apply(op, t, x, y);
    }
    store(out, out_type, i, r);
  }
}

__global__ void iota_kernel(void* out, int t, View shape, int dimension, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, value = 0;
    for (int d = shape.rank - 1; d >= 0; --d) {
      int64_t idx = rest % shape.dims[d];
      rest /= shape.dims[d];
      if (d == dimension) value = idx;
    }
    store(out, t, i, static_cast<double>(value));
  }
}

__device__ double reduce_step(ReduceOp op, int t, double acc, double x) {
  switch (op) {
    case ReduceOp::kAdd: return apply(EwOp::kAdd, t, acc, x);
    case ReduceOp::kMultiply: return apply(EwOp::kMultiply, t, acc, x);
    case ReduceOp::kMaximum: return apply(EwOp::kMaximum, t, acc, x);
    case ReduceOp::kMinimum: return apply(EwOp::kMinimum, t, acc, x);
    case ReduceOp::kAnd: return apply(EwOp::kAnd, t, acc, x);
    default: return apply(EwOp::kOr, t, acc, x);
  }
}

// One thread per output element; the reduced elements in row-major order.
__global__ void reduce_kernel(void* out, const void* in, const void* init, int t, View shape, uint32_t mask,
                              ReduceOp op, int64_t out_n, int64_t red_n) {
  int64_t strides[kMaxRank];
  int64_t s = 1;
  for (int d = shape.rank - 1; d >= 0; --d) { strides[d] = s; s *= shape.dims[d]; }
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < out_n;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t base = 0, rest = o;
    for (int d = shape.rank - 1; d >= 0; --d) {
      if (mask & (1u << d)) continue;
      base += (rest % shape.dims[d]) * strides[d];
      rest /= shape.dims[d];
    }
    double acc = load(init, t, 0);
    for (int64_t r = 0; r < red_n; ++r) {
      int64_t off = base, rr = r;
      for (int d = shape.rank - 1; d >= 0; --d) {
        if (!(mask & (1u << d))) continue;
        off += (rr % shape.dims[d]) * strides[d];
        rr /= shape.dims[d];
      }
      acc = to_type(reduce_step(op, t, acc, load(in, t, off)), t);
    }
    store(out, t, o, acc);
  }
}

__global__ void naive_gemm_kernel(int t, void* c, const void* a, const void* b, int64_t batch, int64_t m, int64_t n,
                                  int64_t k, GemmOperand al, GemmOperand bl) {
  const int64_t total = batch * m * n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t col = i % n, row = (i / n) % m, bi = i / (m * n);
    double acc = 0.0;
    bool integer = !(is_narrow_float(t) || t == kF64);
    int64_t iacc = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      double x = load(a, t, bi * al.batch_stride + row * al.row_stride + kk * al.col_stride);
      double y = load(b, t, bi * bl.batch_stride + kk * bl.row_stride + col * bl.col_stride);
      if (integer) {
        iacc = static_cast<int64_t>(static_cast<uint64_t>(iacc) +
                                    static_cast<uint64_t>(wrap64(x)) * static_cast<uint64_t>(wrap64(y)));
      } else {
        acc += x * y;
      }
    }
    store(c, t, i, integer ? static_cast<double>(iacc) : acc);
  }
}

__global__ void fill_kernel(void* out, int t, int64_t n, double v) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    store(out, t, i, v);
  }
}

__device__ uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The host's ramp_literal / random_literal, one element per step (see
// ParameterInit); the stored value goes through store(), which rounds and
// wraps as round_to_type does.
__global__ void init_parameter_kernel(void* out, int t, int64_t n, ParameterInit init) {
  constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;  // literal.h kSplitmix64Gamma
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double value = 0.0;
    if (init.random) {
      uint64_t r = splitmix64_mix(init.random_start + static_cast<uint64_t>(i + 1) * kGamma);
      double u = ldexp(static_cast<double>(r >> (64 - init.fraction_bits)), -init.fraction_bits);
      double v = 2.0 * u - 1.0;
      if (t == kPred) value = u < 0.5 ? 1.0 : 0.0;
      else if (t == kS8 || t == kS32 || t == kU32 || t == kS64) value = floor(v);
      else value = v;
    } else {
      int64_t m = ((init.device % 11) * 7 + (init.parameter % 11) * 3 + i % 11) % 11;
      value = t == kPred ? ((m - 5) % 2 != 0 ? 1.0 : 0.0) : static_cast<double>(m - 5);
    }
    store(out, t, i, value);
  }
}

int64_t count_of(const View& v) {
  int64_t n = 1;
  for (int d = 0; d < v.rank; ++d) n *= v.dims[d];
  return n;
}

}  // namespace

int launch_strided_copy(void* dst, int dst_type, const View& dst_view, const void* src, int src_type,
                        const View& src_view, const DynamicStarts& dynamic, void* stream) {
  int64_t n = count_of(dst_view);
  if (n == 0) return 0;
  int error = 0;
  if (dst_type == src_type &&
      (fast::copy_runs(dst, dst_type, dst_view, src, src_view, dynamic, static_cast<cudaStream_t>(stream), &error) ||
       fast::broadcast_scalar(dst, dst_type, dst_view, src, src_view, dynamic, static_cast<cudaStream_t>(stream),
                              &error))) {
    return error;
  }
  strided_copy_kernel<<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      dst, dst_type, dst_view, src, src_type, src_view, dynamic, n);
  return static_cast<int>(cudaGetLastError());
}

int launch_elementwise(EwOp op, int operand_type, int out_type, void* out, int64_t n, const void* a, int64_t a_count,
                       const void* b, int64_t b_count, const void* c, int64_t c_count, int direction,
                       bool total_order, void* stream) {
  if (n == 0) return 0;
  int error = 0;
  if (fast::elementwise(op, operand_type, out_type, out, n, a, a_count, b, b_count, static_cast<cudaStream_t>(stream),
                        &error)) {
    return error;
  }
  elementwise_kernel<<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      op, operand_type, out_type, out, n, a, a_count, b, b_count, c, c_count, direction, total_order);
  return static_cast<int>(cudaGetLastError());
}

int launch_iota(void* out, int type, const View& shape, int dimension, void* stream) {
  int64_t n = count_of(shape);
  if (n == 0) return 0;
  iota_kernel<<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(out, type, shape, dimension, n);
  return static_cast<int>(cudaGetLastError());
}

int launch_reduce(void* out, const void* in, const void* init, int type, const View& in_shape, uint32_t reduced_mask,
                  ReduceOp op, void* stream) {
  int64_t out_n = 1, red_n = 1;
  for (int d = 0; d < in_shape.rank; ++d) {
    if (reduced_mask & (1u << d)) red_n *= in_shape.dims[d]; else out_n *= in_shape.dims[d];
  }
  if (out_n == 0) return 0;
  reduce_kernel<<<blocks_for(out_n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      out, in, init, type, in_shape, reduced_mask, op, out_n, red_n);
  return static_cast<int>(cudaGetLastError());
}

int launch_naive_gemm(int type, void* c, const void* a, const void* b, int64_t batch, int64_t m, int64_t n, int64_t k,
                      const GemmOperand& a_layout, const GemmOperand& b_layout, void* stream) {
  int64_t total = batch * m * n;
  if (total == 0) return 0;
  naive_gemm_kernel<<<blocks_for(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      type, c, a, b, batch, m, n, k, a_layout, b_layout);
  return static_cast<int>(cudaGetLastError());
}

int launch_init_parameter(void* out, int type, int64_t count, const ParameterInit& init, void* stream) {
  if (count == 0) return 0;
  init_parameter_kernel<<<blocks_for(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(out, type, count,
                                                                                               init);
  return static_cast<int>(cudaGetLastError());
}

int launch_fill(void* out, int type, int64_t count, double v, void* stream) {
  if (count == 0) return 0;
  fill_kernel<<<blocks_for(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(out, type, count, v);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace sl::exec::cuda
