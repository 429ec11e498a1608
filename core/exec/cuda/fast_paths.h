#pragma once
// Fast paths of kernels.cu for the shapes real programs are made of. Each
// gives bit for bit the generic kernel's result, or returns false (nothing
// launched) when the operation is not of its form. The generic kernels read
// and write every element through double and a per-element type switch,
// which held them to about a fifth of HBM bandwidth on an H200.
// Internal to core/exec/cuda.

#include <cuda_runtime.h>

#include <cstdint>

#include "core/exec/cuda/kernels.h"

namespace sl::exec::cuda::fast {

// Element types as kernels.cu numbers them (hlo::PrimitiveType order).
enum : int { kPred = 0, kS8, kS32, kU32, kS64, kF16, kBF16, kF32, kF64 };

constexpr int kThreads = 256;  // per block, every kernel of kernels.cu
int blocks_for(int64_t n);     // grid-stride grid for n items, at most 8192 blocks
int element_bytes(int type);

// Arithmetic, unary math and converts among f16/bf16/f32 on whole operands
// (no scalar broadcast), in float, 16 bytes per load. Sets *error to the
// launch error when it launched.
bool elementwise(EwOp op, int operand_type, int out_type, void* out, int64_t n, const void* a, int64_t a_count,
                 const void* b, int64_t b_count, cudaStream_t stream, int* error);

// Same-type copies whose index space is runs of contiguous elements in both
// views: one 2D memcpy on the copy engines without dynamic starts, a
// word-wise copy kernel with them (dynamic-slice, dynamic-update-slice).
bool copy_runs(void* dst, int type, const View& dst_view, const void* src, const View& src_view,
               const DynamicStarts& dynamic, cudaStream_t stream, int* error);

// A scalar broadcast into a contiguous destination: a fill with the
// scalar's bits, 16 bytes per store.
bool broadcast_scalar(void* dst, int type, const View& dst_view, const void* src, const View& src_view,
                      const DynamicStarts& dynamic, cudaStream_t stream, int* error);

}  // namespace sl::exec::cuda::fast
