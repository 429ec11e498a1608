#include "core/exec/cuda/gemm_lt.h"

#include "core/exec/cuda/cuda_check.h"
#include "core/hlo/shape.h"

namespace sl::exec::cuda {

using hlo::PrimitiveType;

struct GemmRunner::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLASLt's A (= our rhs), B (= our lhs)
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  ~Plan() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

bool has_bias(GemmEpilogue e) {
  return e == GemmEpilogue::kBias || e == GemmEpilogue::kBiasRelu || e == GemmEpilogue::kBiasGelu;
}

bool gemm_lt_supports(int type, int out_type) {
  auto t = static_cast<PrimitiveType>(type);
  auto o = out_type < 0 ? t : static_cast<PrimitiveType>(out_type);
  if (t == PrimitiveType::kF32) return o == PrimitiveType::kF32;
  return (t == PrimitiveType::kBF16 || t == PrimitiveType::kF16) && (o == t || o == PrimitiveType::kF32);
}

Result<std::unique_ptr<GemmRunner>> GemmRunner::create() {
  std::unique_ptr<GemmRunner> r(new GemmRunner());
  SL_CUBLAS(cublasLtCreate(&r->handle_), "");
  return r;
}

GemmRunner::~GemmRunner() {
  plans_.clear();
  if (handle_) cublasLtDestroy(handle_);
}

namespace {

Status set_batch(cublasLtMatrixLayout_t layout, int64_t batch, int64_t stride, const std::string& where) {
  if (batch <= 1) return ok_status();
  int32_t count = static_cast<int32_t>(batch);
  SL_CUBLAS(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count), where);
  SL_CUBLAS(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                             sizeof stride),
            where);
  return ok_status();
}

}  // namespace

Result<GemmRunner::Plan*> GemmRunner::plan(const GemmProblem& p, size_t workspace_bytes, const std::string& where) {
  auto key = std::make_tuple(p.type, p.out_type, p.m, p.n, p.k, p.batch, p.lhs_transposed, p.rhs_transposed, p.allow_tf32,
                             p.sm_count_target, workspace_bytes, static_cast<int>(p.epilogue),
                             std::make_tuple(p.lhs_ld, p.rhs_ld, p.lhs_batch_stride, p.rhs_batch_stride));
  if (auto it = plans_.find(key); it != plans_.end()) return it->second.get();

  auto plan = std::make_unique<Plan>();
  cudaDataType_t dt = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (static_cast<PrimitiveType>(p.type)) {
    case PrimitiveType::kBF16: dt = CUDA_R_16BF; break;
    case PrimitiveType::kF16: dt = CUDA_R_16F; break;
    default: compute = p.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F; break;
  }
  SL_CUBLAS(cublasLtMatmulDescCreate(&plan->desc, compute, CUDA_R_32F), where);
  // cuBLASLt's A is our rhs seen column-major: [n, k] (op N) or, when stored
  // [n, k] row-major, a [k, n] column-major matrix used transposed.
  cublasOperation_t ta = p.rhs_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t tb = p.lhs_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  SL_CUBLAS(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), where);
  SL_CUBLAS(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), where);
  if (p.sm_count_target > 0) {
    // The heuristic then picks (and sizes the grid of) a kernel for that many
    // SMs, leaving the rest to a concurrent stream's kernels.
    const int32_t sms = p.sm_count_target;
    SL_CUBLAS(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sms, sizeof sms),
              where);
  }
  if (p.epilogue != GemmEpilogue::kDefault) {
    cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_DEFAULT;
    switch (p.epilogue) {
      case GemmEpilogue::kRelu: e = CUBLASLT_EPILOGUE_RELU; break;
      case GemmEpilogue::kBias: e = CUBLASLT_EPILOGUE_BIAS; break;
      case GemmEpilogue::kBiasRelu: e = CUBLASLT_EPILOGUE_RELU_BIAS; break;
      case GemmEpilogue::kGelu: e = CUBLASLT_EPILOGUE_GELU; break;
      case GemmEpilogue::kBiasGelu: e = CUBLASLT_EPILOGUE_GELU_BIAS; break;
      case GemmEpilogue::kDefault: break;
    }
    SL_CUBLAS(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e), where);
  }
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  // Row-major rows are column-major columns: the leading dimension is the
  // stored row length unless the operand says otherwise (a strided batch).
  const int64_t lda = p.rhs_ld > 0 ? p.rhs_ld : (p.rhs_transposed ? p.k : p.n);
  const int64_t ldb = p.lhs_ld > 0 ? p.lhs_ld : (p.lhs_transposed ? p.m : p.k);
  if (p.rhs_transposed) {
    SL_CUBLAS(cublasLtMatrixLayoutCreate(&plan->a, dt, u(p.k), u(p.n), lda), where);
  } else {
    SL_CUBLAS(cublasLtMatrixLayoutCreate(&plan->a, dt, u(p.n), u(p.k), lda), where);
  }
  if (p.lhs_transposed) {
    SL_CUBLAS(cublasLtMatrixLayoutCreate(&plan->b, dt, u(p.m), u(p.k), ldb), where);
  } else {
    SL_CUBLAS(cublasLtMatrixLayoutCreate(&plan->b, dt, u(p.k), u(p.m), ldb), where);
  }
  const cudaDataType_t out_dt = (p.out_type >= 0 && p.out_type != p.type) ? CUDA_R_32F : dt;
  SL_CUBLAS(cublasLtMatrixLayoutCreate(&plan->c, out_dt, u(p.n), u(p.m), p.n), where);
  SL_RETURN_IF_ERROR(set_batch(plan->a, p.batch, p.rhs_batch_stride > 0 ? p.rhs_batch_stride : p.k * p.n, where));
  SL_RETURN_IF_ERROR(set_batch(plan->b, p.batch, p.lhs_batch_stride > 0 ? p.lhs_batch_stride : p.m * p.k, where));
  SL_RETURN_IF_ERROR(set_batch(plan->c, p.batch, p.m * p.n, where));

  cublasLtMatmulPreference_t pref = nullptr;
  SL_CUBLAS(cublasLtMatmulPreferenceCreate(&pref), where);
  uint64_t max_ws = workspace_bytes;
  cublasStatus_t st =
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof max_ws);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasLtMatmulAlgoGetHeuristic(handle_, plan->desc, plan->a, plan->b, plan->c, plan->c, pref, 1, &result,
                                        &found);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  SL_RETURN_IF_ERROR(cublas_status(st, "cublasLtMatmulAlgoGetHeuristic", where));
  if (found == 0) return runtime_error("cublasLtMatmulAlgoGetHeuristic found no algorithm (" + where + ")");
  plan->algo = result.algo;
  plan->workspace = result.workspaceSize;
  Plan* raw = plan.get();
  plans_.emplace(key, std::move(plan));
  return raw;
}

Status GemmRunner::run(const GemmProblem& p, const void* lhs, const void* rhs, void* c, void* workspace,
                       size_t workspace_bytes, cudaStream_t stream, const std::string& where, const void* c_in,
                       const void* bias) {
  if (p.beta != 0.0f && c_in == nullptr) return runtime_error("GEMM with beta != 0 has no C operand (" + where + ")");
  if (has_bias(p.epilogue) && bias == nullptr) return runtime_error("GEMM bias epilogue has no bias (" + where + ")");
  SL_ASSIGN_OR_RETURN(Plan * plan, this->plan(p, workspace_bytes, where));
  if (has_bias(p.epilogue)) {
    // Column-major D is [n, m]: cuBLASLt's per-row bias is our per-column one.
    SL_CUBLAS(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
              where);
  }
  const float alpha = p.alpha, beta = p.beta;
  const void* c_read = p.beta != 0.0f ? c_in : c;
  SL_CUBLAS(cublasLtMatmul(handle_, plan->desc, &alpha, rhs, plan->a, lhs, plan->b, &beta, c_read, plan->c, c, plan->c,
                           &plan->algo, workspace, plan->workspace, stream),
            where);
  return ok_status();
}

}  // namespace sl::exec::cuda
