#pragma once
// Host launchers for the CUDA kernels of the elementwise and data ops
// (docs/program-format.md). Plain C++ header: no CUDA types, streams as void*.
// Element types are hlo::PrimitiveType values (as int); every kernel is a
// grid-stride loop that converts through the same rules as the cpu backend
// (narrow floats compute in f32, f64 in double, integers in int64, results
// rounded or wrapped to the output type).

#include <cstdint>

namespace sl::exec::cuda {

constexpr int kMaxRank = 8;

// An index space `dims` mapped onto memory: element offset of index i is
// offset + sum(i[d] * strides[d]). Strides may be 0 (broadcast).
struct View {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int64_t offset = 0;
};

// dynamic-slice / dynamic-update-slice start indices: scalars on the device,
// clamped to [0, limit[d]], then multiplied by `strides[d]` of the moved view.
struct DynamicStarts {
  int count = 0;
  const void* index[kMaxRank] = {};
  int index_type[kMaxRank] = {};
  int64_t limit[kMaxRank] = {};
  bool apply_to_dst = false;  // update-slice moves the destination window
};

enum class EwOp : int {
  kAdd, kSubtract, kMultiply, kDivide, kMaximum, kMinimum, kRemainder, kAnd, kOr,
  kNegate, kAbs, kExp, kConvert, kCompare, kSelect,
};

// Returns the launch error (0 = cudaSuccess) as an int.
// dst[dst view(i)] = convert(src[src view(i)]) for every i of dst.dims.
int launch_strided_copy(void* dst, int dst_type, const View& dst_view, const void* src, int src_type,
                        const View& src_view, const DynamicStarts& dynamic, void* stream);

// out[i] = op(a[i], b[i], c[i]) with operands of one element broadcast.
// `operand_type` is a's type (for select: b's); compare gives pred.
// compare: direction = hlo::ComparisonDirection value, total_order flag.
int launch_elementwise(EwOp op, int operand_type, int out_type, void* out, int64_t n, const void* a,
                       int64_t a_count, const void* b, int64_t b_count, const void* c, int64_t c_count,
                       int direction, bool total_order, void* stream);

// out[i] = index of i along `dimension` of `dims`.
int launch_iota(void* out, int type, const View& shape, int dimension, void* stream);

enum class ReduceOp : int { kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr };
// Reduces `in` (index space in_shape, row-major) over the dims flagged in
// reduced_mask (bit d), starting from the scalar *init, in row-major order,
// rounding to `type` after every step like the cpu backend's evaluation.
int launch_reduce(void* out, const void* in, const void* init, int type, const View& in_shape,
                  uint32_t reduced_mask, ReduceOp op, void* stream);

// Reference GEMM for types cuBLASLt is not used for (integers, f64, pred):
// C[b][m][n] = sum_k A[b](m,k) * B[b](k,n) with A/B element strides.
struct GemmOperand {
  int64_t batch_stride = 0, row_stride = 0, col_stride = 0;  // of (m,k) for A, (k,n) for B
};
int launch_naive_gemm(int type, void* c, const void* a, const void* b, int64_t batch, int64_t m, int64_t n,
                      int64_t k, const GemmOperand& a_layout, const GemmOperand& b_layout, void* stream);

// Parameter initialisation on the device, element for element what
// ramp_literal / random_literal (core/exec/literal.h) compute on the host, so
// large parameters never pass through host memory.
struct ParameterInit {
  bool random = false;
  uint64_t random_start = 0;  // random_stream_start(seed, device, parameter)
  int fraction_bits = 53;     // random_fraction_bits(type)
  int64_t device = 0;         // ramp
  int64_t parameter = 0;      // ramp
};
int launch_init_parameter(void* out, int type, int64_t count, const ParameterInit& init, void* stream);

// Fills `count` elements of `type` with the value v (converted).
int launch_fill(void* out, int type, int64_t count, double v, void* stream);

}  // namespace sl::exec::cuda
