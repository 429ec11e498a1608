// sort (variadic, with a comparator computation) and topk.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/exec/cpu/array_util.h"
#include "core/exec/cpu/ops.h"

namespace sl::exec::cpu {
namespace {

// Calls fn(offsets) for every 1-D line along `dim` of `dims`.
template <typename Fn>
Status for_each_line(const std::vector<int64_t>& dims, size_t dim, Fn fn) {
  const auto strides = row_major_strides(dims);
  std::vector<int64_t> outer = dims;
  outer[dim] = 1;
  for (int64_t d : outer) {
    if (d == 0) return ok_status();
  }
  std::vector<int64_t> index(dims.size(), 0);
  std::vector<size_t> line(static_cast<size_t>(dims[dim]));
  do {
    int64_t base = 0;
    for (size_t d = 0; d < dims.size(); ++d) base += index[d] * strides[d];
    for (size_t k = 0; k < line.size(); ++k) line[k] = static_cast<size_t>(base + static_cast<int64_t>(k) * strides[dim]);
    SL_RETURN_IF_ERROR(fn(line));
  } while (next_index(index, outer));
  return ok_status();
}

// Total order for topk: NaN above +inf, -0 below +0.
bool total_greater(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return !std::isnan(b);
  if (a == b) return !std::signbit(a) && std::signbit(b);
  return a > b;
}

}  // namespace

Result<std::vector<Literal>> eval_sort(const hlo::Instruction& inst, const Operands& operands,
                                       const Comparator& less) {
  if (operands.empty()) return invalid_input(fmt::format("'{}': sort needs operands", inst.name));
  const std::vector<int64_t>& dims = operands[0]->shape.dims;
  for (const Literal* l : operands) {
    if (l->shape.dims != dims) return invalid_input(fmt::format("'{}': sort operands differ in shape", inst.name));
  }
  const int64_t dim = inst.dimensions.empty() ? static_cast<int64_t>(dims.size()) - 1 : inst.dimensions[0];
  if (dim < 0 || dim >= static_cast<int64_t>(dims.size())) {
    return invalid_input(fmt::format("'{}': sort dimension {} out of range", inst.name, dim));
  }
  std::vector<Literal> out;
  for (const Literal* l : operands) out.push_back(*l);
  const size_t n = operands.size();
  Status failure = ok_status();
  std::vector<double> lhs(n), rhs(n);
  SL_RETURN_IF_ERROR(for_each_line(dims, static_cast<size_t>(dim), [&](const std::vector<size_t>& line) -> Status {
    std::vector<size_t> order(line.size());
    std::iota(order.begin(), order.end(), 0);
    // A stable sort serves both: an unstable sort may order ties either way.
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (!failure.is_ok()) return false;
      for (size_t k = 0; k < n; ++k) {
        lhs[k] = operands[k]->values[line[a]];
        rhs[k] = operands[k]->values[line[b]];
      }
      auto r = less(lhs, rhs);
      if (!r) {
        failure = r.status();
        return false;
      }
      return *r;
    });
    SL_RETURN_IF_ERROR(failure);
    for (size_t k = 0; k < n; ++k) {
      for (size_t j = 0; j < line.size(); ++j) out[k].values[line[j]] = operands[k]->values[line[order[j]]];
    }
    return ok_status();
  }));
  return out;
}

Result<std::vector<Literal>> eval_topk(const hlo::Instruction& inst, const Literal& operand,
                                       const std::vector<hlo::Shape>& result_shapes) {
  if (!inst.k || result_shapes.size() != 2 || operand.shape.rank() < 1) {
    return invalid_input(fmt::format("'{}': topk needs k= and a (values, indices) result", inst.name));
  }
  const int64_t k = *inst.k;
  const bool largest = inst.largest.value_or(true);
  const std::vector<int64_t>& dims = operand.shape.dims;
  const size_t last = dims.size() - 1;
  if (k < 0 || k > dims[last] || result_shapes[0].dims.empty() || result_shapes[0].dims.back() != k) {
    return invalid_input(fmt::format("'{}': topk k={} does not fit the shapes", inst.name, k));
  }
  Literal values{result_shapes[0], std::vector<double>(static_cast<size_t>(result_shapes[0].element_count()))};
  Literal indices{result_shapes[1], std::vector<double>(static_cast<size_t>(result_shapes[1].element_count()))};
  size_t row = 0;
  SL_RETURN_IF_ERROR(for_each_line(dims, last, [&](const std::vector<size_t>& line) -> Status {
    std::vector<size_t> order(line.size());
    std::iota(order.begin(), order.end(), 0);
    // Ties keep the lower index first.
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const double x = operand.values[line[a]], y = operand.values[line[b]];
      return largest ? total_greater(x, y) : total_greater(y, x);
    });
    for (int64_t j = 0; j < k; ++j) {
      const auto o = row * static_cast<size_t>(k) + static_cast<size_t>(j);
      values.values[o] = operand.values[line[order[static_cast<size_t>(j)]]];
      indices.values[o] = static_cast<double>(order[static_cast<size_t>(j)]);
    }
    ++row;
    return ok_status();
  }));
  std::vector<Literal> out;
  out.push_back(std::move(values));
  out.push_back(std::move(indices));
  return out;
}

}  // namespace sl::exec::cpu
