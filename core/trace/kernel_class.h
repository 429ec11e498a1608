#pragma once
// What kind of work a captured kernel is, from its (demangled, shortened)
// name alone: captures of foreign programs (JAX, PyTorch) carry no
// instruction that says so. Names seen in JAX 0.11 captures on an H200:
// cuBLASLt's nvjet_* and cutlass kernels, XLA's Triton GEMM fusions
// (gemm_fusion_dot_28), NCCL's ncclDevKernel_*, XLA's own fusions.

#include <string_view>

#include "core/trace/trace.h"

namespace sl::trace {

// kGemm, kCollective or kOther (any other kernel). Copies and memsets are
// records of their own kind and never reach this.
EventKind classify_kernel(std::string_view name);

// True for cuDNN's kernels: their names carry "cudnn" (sm90_xmma_fprop_...
// _cudnn, cudnn::engines_precompiled::convertTensor_kernel). Its legacy
// engines' kernels (wgrad_alg0_engine_NHWC) do not, and are not known here.
bool is_dnn_kernel(std::string_view name);

// True for kernels XLA's autotuner and buffer checker launch while compiling
// (stream_executor's redzone checker, comparison and delay kernels): never
// part of a program's step.
bool is_autotuning_kernel(std::string_view name);

}  // namespace sl::trace
