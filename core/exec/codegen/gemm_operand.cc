#include "core/exec/codegen/gemm_operand.h"

namespace sl::exec::codegen {

std::optional<StridedOperand> strided_operand(const std::vector<int64_t>& dims, int64_t batch, int64_t contracting,
                                              bool is_rhs) {
  if (dims.size() != 3 || batch == contracting || batch < 0 || batch > 2 || contracting < 0 || contracting > 2) {
    return std::nullopt;
  }
  if (batch == 2) return std::nullopt;
  const int64_t free = 3 - batch - contracting;
  const int64_t stride[3] = {dims[1] * dims[2], dims[2], 1};
  StridedOperand s;
  // The minor dimension is k: lhs [m, k] as it is, rhs [n, k] (transposed);
  // else it is the free one: lhs [k, m] (transposed), rhs [k, n].
  const bool k_minor = contracting == 2;
  s.transposed = is_rhs ? k_minor : !k_minor;
  s.ld = stride[k_minor ? free : contracting];
  s.batch_stride = stride[batch];
  s.free = dims[static_cast<size_t>(free)];
  s.k = dims[static_cast<size_t>(contracting)];
  s.batch = dims[static_cast<size_t>(batch)];
  return s;
}

}  // namespace sl::exec::codegen
