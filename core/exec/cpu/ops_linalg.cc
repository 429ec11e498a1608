// cholesky and triangular-solve over the two minor dimensions (leading
// dimensions are a batch), with the semantics of XLA's operation reference.
// Only the triangle `lower=` names is read; the other triangle of a cholesky
// result is implementation-defined in XLA, and zeros here.

#include <fmt/format.h>

#include <cmath>

#include "core/exec/cpu/ops.h"

namespace sl::exec::cpu {
namespace {

bool flag(const hlo::Instruction& inst, std::string_view name) {
  auto it = inst.attributes.find(name);
  return it != inst.attributes.end() && it->second == "true";
}

// The batch count and the sizes of the two minor dimensions.
struct Matrices {
  int64_t batch = 1, rows = 0, cols = 0;
};

Result<Matrices> matrices_of(const hlo::Shape& shape) {
  if (shape.rank() < 2) return invalid_input(fmt::format("{} has no matrix dimensions", hlo::to_string(shape)));
  Matrices m;
  for (size_t d = 0; d + 2 < shape.dims.size(); ++d) m.batch *= shape.dims[d];
  m.rows = shape.dims[shape.dims.size() - 2];
  m.cols = shape.dims.back();
  return m;
}

}  // namespace

Result<Literal> eval_cholesky(const hlo::Instruction& inst, const Literal& a) {
  SL_ASSIGN_OR_RETURN(Matrices m, matrices_of(a.shape));
  if (m.rows != m.cols) return invalid_input("cholesky needs square matrices");
  const bool lower = flag(inst, "lower");
  const int64_t n = m.rows;
  Literal out{a.shape, std::vector<double>(a.values.size(), 0.0)};
  for (int64_t b = 0; b < m.batch; ++b) {
    const double* in = a.values.data() + b * n * n;
    double* l = out.values.data() + b * n * n;
    // Lower factor L of the lower triangle; for lower=false, of the upper
    // triangle read transposed, and written back as U = L^T.
    auto at = [&](int64_t i, int64_t j) { return lower ? in[i * n + j] : in[j * n + i]; };
    auto put = [&](int64_t i, int64_t j) -> double& { return lower ? l[i * n + j] : l[j * n + i]; };
    for (int64_t j = 0; j < n; ++j) {
      double d = at(j, j);
      for (int64_t k = 0; k < j; ++k) d -= put(j, k) * put(j, k);
      put(j, j) = std::sqrt(d);  // NaN when the matrix is not positive definite, as in XLA
      for (int64_t i = j + 1; i < n; ++i) {
        double s = at(i, j);
        for (int64_t k = 0; k < j; ++k) s -= put(i, k) * put(j, k);
        put(i, j) = s / put(j, j);
      }
    }
  }
  for (double& v : out.values) v = round_to_type(v, a.shape.type);
  return out;
}

Result<Literal> eval_triangular_solve(const hlo::Instruction& inst, const Literal& a, const Literal& b) {
  SL_ASSIGN_OR_RETURN(Matrices ma, matrices_of(a.shape));
  SL_ASSIGN_OR_RETURN(Matrices mb, matrices_of(b.shape));
  const bool left = flag(inst, "left_side"), lower = flag(inst, "lower"), unit = flag(inst, "unit_diagonal");
  auto t = inst.attributes.find("transpose_a");
  const bool transpose = t != inst.attributes.end() && (t->second == "TRANSPOSE" || t->second == "ADJOINT");
  const int64_t n = ma.rows;
  if (ma.rows != ma.cols || ma.batch != mb.batch || (left ? mb.rows : mb.cols) != n) {
    return invalid_input(fmt::format("a {} does not solve against b {} (left_side={})", hlo::to_string(a.shape),
                                     hlo::to_string(b.shape), left));
  }
  Literal out = b;
  for (int64_t batch = 0; batch < ma.batch; ++batch) {
    const double* A = a.values.data() + batch * n * n;
    double* X = out.values.data() + batch * mb.rows * mb.cols;
    // T = op(triangle of A); the right side solves T^T x^T = b^T instead.
    auto tri = [&](int64_t i, int64_t j) {
      if (i == j) return unit ? 1.0 : A[i * n + i];
      return (lower ? i > j : i < j) ? A[i * n + j] : 0.0;
    };
    auto op = [&](int64_t i, int64_t j) { return transpose ? tri(j, i) : tri(i, j); };
    auto system = [&](int64_t i, int64_t j) { return left ? op(i, j) : op(j, i); };
    const bool forward = (lower != transpose) == left;  // the system's matrix is lower triangular
    const int64_t count = left ? mb.cols : mb.rows;
    for (int64_t c = 0; c < count; ++c) {
      // Element i of this right-hand side, in place.
      auto x = [&](int64_t i) -> double& { return left ? X[i * mb.cols + c] : X[c * mb.cols + i]; };
      for (int64_t step = 0; step < n; ++step) {
        const int64_t i = forward ? step : n - 1 - step;
        double s = x(i);
        for (int64_t k = 0; k < n; ++k) {
          if (forward ? k < i : k > i) s -= system(i, k) * x(k);
        }
        x(i) = s / system(i, i);
      }
    }
  }
  for (double& v : out.values) v = round_to_type(v, b.shape.type);
  return out;
}

}  // namespace sl::exec::cpu
