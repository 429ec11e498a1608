#include "core/exec/cuda/fast_paths.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace sl::exec::cuda::fast {
namespace {

// ---- elementwise: f16 / bf16 / f32 in float ----------------------------

template <typename T>
struct FloatOf;
template <>
struct FloatOf<float> {
  __device__ static float get(float v) { return v; }
  __device__ static float put(float v) { return v; }
};
template <>
struct FloatOf<__half> {
  __device__ static float get(__half v) { return __half2float(v); }
  __device__ static __half put(float v) { return __float2half_rn(v); }
};
template <>
struct FloatOf<__nv_bfloat16> {
  __device__ static float get(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 put(float v) { return __float2bfloat16_rn(v); }
};

// As kernels.cu's apply() for narrow floats (max/min propagate NaN).
__device__ float float_op(EwOp op, float a, float b) {
  switch (op) {
    case EwOp::kAdd: return a + b;
    case EwOp::kSubtract: return a - b;
    case EwOp::kMultiply: return a * b;
    case EwOp::kDivide: return a / b;
    case EwOp::kMaximum: return (isnan(a) || isnan(b)) ? __int_as_float(0x7fc00000) : (a > b ? a : b);
    case EwOp::kMinimum: return (isnan(a) || isnan(b)) ? __int_as_float(0x7fc00000) : (a < b ? a : b);
    case EwOp::kRemainder: return fmodf(a, b);
    case EwOp::kNegate: return -a;
    case EwOp::kAbs: return fabsf(a);
    case EwOp::kExp: return expf(a);
    default: return a;  // kConvert
  }
}

bool float_op_supported(EwOp op) {
  switch (op) {
    case EwOp::kAdd: case EwOp::kSubtract: case EwOp::kMultiply: case EwOp::kDivide: case EwOp::kMaximum:
    case EwOp::kMinimum: case EwOp::kRemainder: case EwOp::kNegate: case EwOp::kAbs: case EwOp::kExp:
    case EwOp::kConvert:
      return true;
    default:
      return false;
  }
}

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// Elements per thread step: 16-byte loads of the wider type.
template <typename In, typename Out>
constexpr int kPackOf = 16 / (sizeof(In) > sizeof(Out) ? sizeof(In) : sizeof(Out));

template <typename In, typename Out>
__global__ void float_elementwise_kernel(EwOp op, Out* out, const In* a, const In* b, int64_t n) {
  constexpr int kN = kPackOf<In, Out>;
  const int64_t packs = n / kN;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (int64_t p = first; p < packs; p += step) {
    const Pack<In, kN> x = reinterpret_cast<const Pack<In, kN>*>(a)[p];
    Pack<In, kN> y{};
    if (b) y = reinterpret_cast<const Pack<In, kN>*>(b)[p];
    Pack<Out, kN> r;
#pragma unroll
    for (int k = 0; k < kN; ++k) {
      r.v[k] = FloatOf<Out>::put(float_op(op, FloatOf<In>::get(x.v[k]), b ? FloatOf<In>::get(y.v[k]) : 0.0f));
    }
    reinterpret_cast<Pack<Out, kN>*>(out)[p] = r;
  }
  for (int64_t i = packs * kN + first; i < n; i += step) {  // the last n % kN elements
    out[i] = FloatOf<Out>::put(float_op(op, FloatOf<In>::get(a[i]), b ? FloatOf<In>::get(b[i]) : 0.0f));
  }
}

bool aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <typename In, typename Out>
bool launch_float(EwOp op, void* out, int64_t n, const void* a, const void* b, cudaStream_t stream, int* error) {
  constexpr int kN = kPackOf<In, Out>;
  if (!aligned(out, sizeof(Out) * kN) || !aligned(a, sizeof(In) * kN) || (b && !aligned(b, sizeof(In) * kN))) {
    return false;
  }
  float_elementwise_kernel<In, Out><<<blocks_for((n + kN - 1) / kN), kThreads, 0, stream>>>(
      op, static_cast<Out*>(out), static_cast<const In*>(a), static_cast<const In*>(b), n);
  *error = static_cast<int>(cudaGetLastError());
  return true;
}

template <typename In>
bool launch_float_to(int out_type, EwOp op, void* out, int64_t n, const void* a, const void* b, cudaStream_t stream,
                     int* error) {
  switch (out_type) {
    case kF16: return launch_float<In, __half>(op, out, n, a, b, stream, error);
    case kBF16: return launch_float<In, __nv_bfloat16>(op, out, n, a, b, stream, error);
    case kF32: return launch_float<In, float>(op, out, n, a, b, stream, error);
    default: return false;
  }
}

// ---- copies of contiguous runs -----------------------------------------

// `rows` runs of `row_elems` contiguous elements, `dst_stride` / `src_stride`
// elements apart: the shape of most slices, concatenation pieces and copies.
struct Runs {
  int64_t rows = 1, row_elems = 1, dst_stride = 0, src_stride = 0;
};

// Whether the index space of `dst` (and the same space of `src`) is such
// runs in both views: an inner block contiguous in both, then outer
// dimensions dense relative to each other in both.
bool as_runs(const View& dst, const View& src, Runs* out) {
  int d = dst.rank - 1;
  Runs r;
  for (; d >= 0; --d) {  // grow the contiguous inner block
    if (dst.dims[d] == 1) continue;
    if (dst.strides[d] != r.row_elems || src.strides[d] != r.row_elems) break;
    r.row_elems *= dst.dims[d];
  }
  int64_t dst_step = 0, src_step = 0;  // stride of the next outer dimension expected
  for (; d >= 0; --d) {
    if (dst.dims[d] == 1) continue;
    if (r.rows == 1) {
      r.dst_stride = dst.strides[d];
      r.src_stride = src.strides[d];
    } else if (dst.strides[d] != dst_step || src.strides[d] != src_step) {
      return false;
    }
    r.rows *= dst.dims[d];
    dst_step = dst.strides[d] * dst.dims[d];
    src_step = src.strides[d] * dst.dims[d];  // one index space: dst.dims
  }
  if (r.rows > 1 && (r.dst_stride < r.row_elems || r.src_stride < r.row_elems)) return false;  // overlapping rows
  *out = r;
  return true;
}

bool integral_index(int type) { return type == kS8 || type == kS32 || type == kU32 || type == kS64; }

__device__ int64_t read_index(const void* p, int type) {
  switch (type) {
    case kS8: return *static_cast<const int8_t*>(p);
    case kS32: return *static_cast<const int32_t*>(p);
    case kU32: return *static_cast<const uint32_t*>(p);
    default: return *static_cast<const int64_t*>(p);
  }
}

// Words each thread has in flight: one load at a time left a 64 MiB
// dynamic-update-slice at 1.4 TB/s on an H200.
constexpr int kCopyUnroll = 4;

// Rows over blockIdx.y, words of a row over x: no division per word. Each
// thread loads kCopyUnroll words (a block's width apart, so a warp's accesses
// stay coalesced) before it stores them.
template <typename Word>
__global__ void copy_runs_kernel(char* dst, int64_t dst_pitch, const char* src, int64_t src_pitch, int64_t rows,
                                 int64_t row_words, DynamicStarts dyn, View moved, int64_t element_bytes) {
  int64_t shift = 0;  // start indices clamped as XLA does, in elements of the moved view
  for (int d = 0; d < dyn.count; ++d) {
    int64_t start = read_index(dyn.index[d], dyn.index_type[d]);
    start = start < 0 ? 0 : (start > dyn.limit[d] ? dyn.limit[d] : start);
    shift += start * moved.strides[d];
  }
  if (dyn.apply_to_dst) dst += shift * element_bytes; else src += shift * element_bytes;
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    Word* to = reinterpret_cast<Word*>(dst + row * dst_pitch);
    const Word* from = reinterpret_cast<const Word*>(src + row * src_pitch);
    const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x * kCopyUnroll;
    for (int64_t base = blockIdx.x * static_cast<int64_t>(blockDim.x) * kCopyUnroll + threadIdx.x; base < row_words;
         base += step) {
      Word v[kCopyUnroll];
#pragma unroll
      for (int u = 0; u < kCopyUnroll; ++u) {
        const int64_t w = base + static_cast<int64_t>(u) * blockDim.x;
        if (w < row_words) v[u] = from[w];
      }
#pragma unroll
      for (int u = 0; u < kCopyUnroll; ++u) {
        const int64_t w = base + static_cast<int64_t>(u) * blockDim.x;
        if (w < row_words) to[w] = v[u];
      }
    }
  }
}

// The widest word (16 bytes down to 1) that divides every one of `values`.
int64_t widest_word(const int64_t* values, int count) {
  for (int64_t word = 16; word > 1; word /= 2) {
    bool divides = true;
    for (int i = 0; i < count && divides; ++i) divides = values[i] % word == 0;
    if (divides) return word;
  }
  return 1;
}

template <typename Word>
void launch_copy_runs(char* dst, int64_t dst_pitch, const char* src, int64_t src_pitch, int64_t rows,
                      int64_t row_bytes, const DynamicStarts& dyn, const View& moved, int64_t es,
                      cudaStream_t stream) {
  const int64_t row_words = row_bytes / static_cast<int64_t>(sizeof(Word));
  const int x = blocks_for((row_words + kCopyUnroll - 1) / kCopyUnroll);
  const int64_t y = rows < 65535 ? rows : 65535;
  const int64_t y_wanted = (8192 + x - 1) / x;  // about as many blocks as the generic kernels
  const dim3 grid(static_cast<unsigned>(x), static_cast<unsigned>(y < y_wanted ? y : y_wanted));
  copy_runs_kernel<Word><<<grid, kThreads, 0, stream>>>(dst, dst_pitch, src, src_pitch, rows, row_words, dyn, moved,
                                                        es);
}

// ---- scalar broadcast ---------------------------------------------------

template <typename Word>
__global__ void fill_pattern_kernel(Word* dst, int64_t words, const unsigned char* scalar, int element_bytes) {
  Word pattern;
  auto* bytes = reinterpret_cast<unsigned char*>(&pattern);
  for (int i = 0; i < static_cast<int>(sizeof(Word)); ++i) bytes[i] = scalar[i % element_bytes];
  for (int64_t w = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; w < words;
       w += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst[w] = pattern;
  }
}

}  // namespace

int blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  if (b < 1) b = 1;
  return static_cast<int>(b > 8192 ? 8192 : b);
}

int element_bytes(int type) {
  switch (type) {
    case kPred: case kS8: return 1;
    case kF16: case kBF16: return 2;
    case kS32: case kU32: case kF32: return 4;
    default: return 8;
  }
}

bool elementwise(EwOp op, int operand_type, int out_type, void* out, int64_t n, const void* a, int64_t a_count,
                 const void* b, int64_t b_count, cudaStream_t stream, int* error) {
  if (!float_op_supported(op) || a_count != n || (b && b_count != n)) return false;
  if (op != EwOp::kConvert && out_type != operand_type) return false;
  switch (operand_type) {
    case kF16: return launch_float_to<__half>(out_type, op, out, n, a, b, stream, error);
    case kBF16: return launch_float_to<__nv_bfloat16>(out_type, op, out, n, a, b, stream, error);
    case kF32: return launch_float_to<float>(out_type, op, out, n, a, b, stream, error);
    default: return false;
  }
}

bool copy_runs(void* dst, int type, const View& dst_view, const void* src, const View& src_view,
               const DynamicStarts& dynamic, cudaStream_t stream, int* error) {
  Runs r;
  if (!as_runs(dst_view, src_view, &r)) return false;
  for (int d = 0; d < dynamic.count; ++d) {
    if (!integral_index(dynamic.index_type[d])) return false;
  }
  const int64_t es = element_bytes(type);
  const int64_t row_bytes = r.row_elems * es;
  const int64_t dst_pitch = r.rows > 1 ? r.dst_stride * es : row_bytes;
  const int64_t src_pitch = r.rows > 1 ? r.src_stride * es : row_bytes;
  char* d = static_cast<char*>(dst) + dst_view.offset * es;
  const char* s = static_cast<const char*>(src) + src_view.offset * es;
  if (dynamic.count == 0) {
    // The copy engines, at full bandwidth; a pitch beyond their limit falls
    // through to the kernel.
    if (cudaMemcpy2DAsync(d, static_cast<size_t>(dst_pitch), s, static_cast<size_t>(src_pitch),
                          static_cast<size_t>(row_bytes), static_cast<size_t>(r.rows), cudaMemcpyDeviceToDevice,
                          stream) == cudaSuccess) {
      *error = 0;
      return true;
    }
    cudaGetLastError();
  }
  const View& moved = dynamic.apply_to_dst ? dst_view : src_view;
  // Words must divide the row, both pitches, both base addresses and every
  // step a dynamic start can move the window by.
  int64_t sizes[5 + kMaxRank] = {row_bytes, dst_pitch, src_pitch,
                                 static_cast<int64_t>(reinterpret_cast<uintptr_t>(d) % 16),
                                 static_cast<int64_t>(reinterpret_cast<uintptr_t>(s) % 16)};
  int count = 5;
  for (int k = 0; k < dynamic.count; ++k) sizes[count++] = moved.strides[k] * es;
  const int64_t word = widest_word(sizes, count);
  switch (word) {
    case 16: launch_copy_runs<uint4>(d, dst_pitch, s, src_pitch, r.rows, row_bytes, dynamic, moved, es, stream); break;
    case 8: launch_copy_runs<uint64_t>(d, dst_pitch, s, src_pitch, r.rows, row_bytes, dynamic, moved, es, stream); break;
    case 4: launch_copy_runs<uint32_t>(d, dst_pitch, s, src_pitch, r.rows, row_bytes, dynamic, moved, es, stream); break;
    case 2: launch_copy_runs<uint16_t>(d, dst_pitch, s, src_pitch, r.rows, row_bytes, dynamic, moved, es, stream); break;
    default: launch_copy_runs<uint8_t>(d, dst_pitch, s, src_pitch, r.rows, row_bytes, dynamic, moved, es, stream); break;
  }
  *error = static_cast<int>(cudaGetLastError());
  return true;
}

bool broadcast_scalar(void* dst, int type, const View& dst_view, const void* src, const View& src_view,
                      const DynamicStarts& dynamic, cudaStream_t stream, int* error) {
  if (dynamic.count != 0) return false;
  for (int d = 0; d < src_view.rank; ++d) {
    if (dst_view.dims[d] != 1 && src_view.strides[d] != 0) return false;
  }
  Runs r;
  if (!as_runs(dst_view, dst_view, &r) || (r.rows > 1 && r.dst_stride != r.row_elems)) return false;
  const int64_t es = element_bytes(type);
  const int64_t bytes = r.rows * r.row_elems * es;
  char* d = static_cast<char*>(dst) + dst_view.offset * es;
  const auto* scalar = static_cast<const unsigned char*>(src) + src_view.offset * es;
  const int64_t checks[] = {bytes, static_cast<int64_t>(reinterpret_cast<uintptr_t>(d) % 16)};
  const int64_t word = widest_word(checks, 2);
  if (word < es) return false;  // the pattern must hold whole elements
  const int64_t words = bytes / word;
  const int grid = blocks_for(words);
  switch (word) {
    case 16: fill_pattern_kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<uint4*>(d), words, scalar, static_cast<int>(es)); break;
    case 8: fill_pattern_kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<uint64_t*>(d), words, scalar, static_cast<int>(es)); break;
    case 4: fill_pattern_kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<uint32_t*>(d), words, scalar, static_cast<int>(es)); break;
    case 2: fill_pattern_kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<uint16_t*>(d), words, scalar, static_cast<int>(es)); break;
    default: fill_pattern_kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<uint8_t*>(d), words, scalar, static_cast<int>(es)); break;
  }
  *error = static_cast<int>(cudaGetLastError());
  return true;
}

}  // namespace sl::exec::cuda::fast
