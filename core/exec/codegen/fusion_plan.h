#pragma once
// How the cuda backend runs one fusion (docs/codegen.md), decided without a
// GPU so tests can check it:
// - kGenerated: generated kernels; a reduce nested in a loop is hoisted into
//   a kernel of its own writing a temporary, so it is computed once, not
//   once per element that reads it;
//   A scatter root is two kernels: its operand into the output (skipped when
//   they share a buffer), then the updates (scatter_codegen.h);
// - kCublasGemm: a Triton GEMM fusion as a cuBLASLt GEMM, with generated
//   prologue kernels for dot operands that are not plain parameters and a
//   generated epilogue kernel for what follows the dot;
// - kOpByOp: no generated kernel; the fused computation's instructions one
//   after another through the backend's per-op kernels, with temporaries;
// - kNone: neither; `why` names the instruction that has no kernel.
// Pure C++: no CUDA dependency.

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/exec/codegen/fusion_codegen.h"
#include "core/hlo/module.h"

namespace sl::exec::codegen {

enum class FusionPath { kGenerated, kCublasGemm, kOpByOp, kNone };
const char* fusion_path_name(FusionPath path);  // "generated", "cublas_gemm", "op_by_op", "none"

// A buffer of one fusion occurrence: its operand N, its result leaf N, or
// temporary N of the plan (device memory the backend keeps per fusion).
struct BufferRef {
  enum Kind { kOperand, kResult, kTemp } kind = kOperand;
  int index = 0;
  bool operator==(const BufferRef&) const = default;
};

struct TempBuffer {
  int instruction = 0;  // in the fused computation
  hlo::PrimitiveType type = hlo::PrimitiveType::kF32;
  int64_t elements = 0;
  int64_t bytes() const { return elements * hlo::primitive_type_bytes(type); }
};

// Row-major C[batch][m][n] = A . B through cuBLASLt (core/exec/cuda/gemm_lt.h).
struct GemmCall {
  BufferRef lhs, rhs, out;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool lhs_transposed = false;  // lhs stored [k, m]
  bool rhs_transposed = false;  // rhs stored [n, k]
  hlo::PrimitiveType type = hlo::PrimitiveType::kBF16;
  hlo::PrimitiveType out_type = hlo::PrimitiveType::kBF16;
  // cuBLASLt's BIAS epilogue adds `bias` (one value per column n).
  bool has_bias = false;
  BufferRef bias;
  // f32 inputs may be rounded to TF32 (the dot's precision, as XLA decides:
  // core/sched/dot_precision.h).
  bool tf32 = false;
  // cuBLASLt's alpha: a power-of-two scale of an operand folded in.
  double alpha = 1.0;
  // A batch dimension that is not leading (gemm_operand.h): each operand's
  // leading dimension and batch stride in elements; 0: packed [batch, rows, cols].
  int64_t lhs_ld = 0, rhs_ld = 0, lhs_batch_stride = 0, rhs_batch_stride = 0;
};

struct FusionStep {
  bool is_gemm = false;
  GeneratedKernel kernel;       // !is_gemm
  std::vector<BufferRef> args;  // the kernel's pointers in order
  GemmCall gemm;                // is_gemm
  // Skipped when fusion operand N is the buffer of result 0: the copy of a
  // scatter's operand into its output, when XLA scatters in place.
  int skip_if_aliased = -1;
};

struct FusionPlan {
  FusionPath path = FusionPath::kNone;
  // Empty for kGenerated and kCublasGemm; else why there is no generated
  // kernel (kNone: and why there is no op-by-op run either).
  std::string why;
  std::vector<FusionStep> steps;  // kGenerated, kCublasGemm: in launch order
  std::vector<TempBuffer> temps;
  int hoisted_reduces = 0;
  // kOpByOp: instructions to issue in order; per instruction of the
  // computation the buffer holding it; result leaves copied from a buffer
  // (an output that is a parameter, or one instruction in two leaves).
  std::vector<int> op_order;
  std::vector<BufferRef> slots;
  std::vector<std::pair<int, BufferRef>> copies;
};

// The backend_config "kind" of a kCustom fusion ("__triton_gemm"), or "".
std::string backend_kind(const hlo::Instruction& fusion);
bool is_gemm_fusion(const hlo::Instruction& fusion);
// kLoop, kInput, and kCustom "__triton" fusions (elementwise and reduce
// computations XLA gives to Triton) are generated.
bool generates(const hlo::Instruction& fusion);

// Ok when the cuda backend has a per-op kernel for `inst` of `computation`
// (core/exec/cuda/thunk_kernels.cc), else an error naming it and why.
Status per_op_kernel(const hlo::Module& module, const hlo::Computation& computation, const hlo::Instruction& inst);

// Reduces of more than this many elements nested in a loop are hoisted.
inline constexpr int64_t kHoistReducedElements = 32;

FusionPlan plan_fusion(const hlo::Module& module, const hlo::Instruction& fusion);

}  // namespace sl::exec::codegen
