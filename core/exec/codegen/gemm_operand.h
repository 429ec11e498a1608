#pragma once
// How cuBLASLt reads a GEMM operand whose batch dimension is not leading
// (XLA's dots may batch over any dimension: lhs [m, batch, k] is one): a
// strided batch of matrices, each with a leading dimension, in the
// operand's row-major buffer. Pure arithmetic, for fusion_plan.cc.

#include <cstdint>
#include <optional>
#include <vector>

namespace sl::exec::codegen {

struct StridedOperand {
  bool transposed = false;   // lhs stored [k, m] / rhs stored [n, k] within each matrix (GemmCall's sense)
  int64_t ld = 0;            // elements between consecutive rows of each matrix as stored
  int64_t batch_stride = 0;  // elements between consecutive matrices
  int64_t free = 0;          // m for the lhs, n for the rhs
  int64_t k = 0;
  int64_t batch = 0;
};

// The rank-3 row-major operand `dims` with its batch dimension at `batch`
// and its contracting one at `contracting`; nullopt when the batch
// dimension is the minor one (no matrix dimension is contiguous then).
std::optional<StridedOperand> strided_operand(const std::vector<int64_t>& dims, int64_t batch, int64_t contracting,
                                              bool is_rhs);

}  // namespace sl::exec::codegen
