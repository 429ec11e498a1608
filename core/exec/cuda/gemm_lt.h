#pragma once
// Row-major GEMMs through cuBLASLt (docs/architecture.md): bf16 and f16 with f32
// accumulation, f32 with TF32 only when allowed. cuBLASLt is column-major, so
// row-major C = A.B is issued as C^T = B^T.A^T by swapping the operands.
// Plans (descriptors + heuristic algorithm) are cached per shape.

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "core/common/status.h"

namespace sl::exec::cuda {

// cuBLASLt epilogues of `__cublas$lt$matmul` (XLA's gemm_backend_config
// "epilogue"); the *_AUX forms are not run.
enum class GemmEpilogue : int { kDefault, kRelu, kBias, kBiasRelu, kGelu, kBiasGelu };

struct GemmProblem {
  int type = 0;             // hlo::PrimitiveType value of the operands: bf16, f16 or f32
  int out_type = -1;        // of the result; -1: same as the operands (bf16/f16 may give f32)
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool lhs_transposed = false;  // lhs stored [k, m] instead of [m, k]
  bool rhs_transposed = false;  // rhs stored [n, k] instead of [k, n]
  bool allow_tf32 = false;
  // SMs the GEMM may use (cuBLASLt SM_COUNT_TARGET); 0: all of the device's.
  int sm_count_target = 0;
  // D = epilogue(alpha * A.B + beta * C [+ bias]), as XLA's GEMM custom-calls.
  float alpha = 1.0f;
  float beta = 0.0f;
  GemmEpilogue epilogue = GemmEpilogue::kDefault;
  // Leading dimension and batch stride of each operand as stored, in
  // elements, for a batch that is not the operands' leading dimension; 0:
  // packed (the row length, and one matrix after the other).
  int64_t lhs_ld = 0, rhs_ld = 0, lhs_batch_stride = 0, rhs_batch_stride = 0;
};

bool has_bias(GemmEpilogue e);

bool gemm_lt_supports(int type, int out_type);

class GemmRunner {
 public:
  static Result<std::unique_ptr<GemmRunner>> create();
  ~GemmRunner();
  GemmRunner(const GemmRunner&) = delete;
  GemmRunner& operator=(const GemmRunner&) = delete;

  // c = lhs . rhs on `stream`; `workspace_bytes` bounds the algorithm choice.
  // `c_in` (beta != 0: shaped like c) and `bias` (a BIAS epilogue: one value
  // per column n) are read when the problem needs them.
  Status run(const GemmProblem& p, const void* lhs, const void* rhs, void* c, void* workspace,
             size_t workspace_bytes, cudaStream_t stream, const std::string& where, const void* c_in = nullptr,
             const void* bias = nullptr);

 private:
  struct Plan;
  GemmRunner() = default;
  Result<Plan*> plan(const GemmProblem& p, size_t workspace_bytes, const std::string& where);

  cublasLtHandle_t handle_ = nullptr;
  std::map<std::tuple<int, int, int64_t, int64_t, int64_t, int64_t, bool, bool, bool, int, size_t, int,
                      std::tuple<int64_t, int64_t, int64_t, int64_t>>,
           std::unique_ptr<Plan>>
      plans_;
};

}  // namespace sl::exec::cuda
