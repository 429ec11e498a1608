// reduce, including the variadic form. Each output element starts from the
// init value(s) and folds the reduced elements in row-major order, as XLA's
// evaluator does.

#include <fmt/format.h>

#include <algorithm>

#include "core/exec/cpu/array_util.h"
#include "core/exec/cpu/ops.h"

namespace sl::exec::cpu {

Result<std::vector<Literal>> eval_reduce(const hlo::Instruction& inst, const Operands& operands,
                                         const std::vector<hlo::Shape>& result_shapes, const Combiner& combine) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return invalid_input(fmt::format("'{}': reduce needs N inputs and N init values, got {} operands", inst.name,
                                     operands.size()));
  }
  const size_t n = operands.size() / 2;
  if (result_shapes.size() != n) {
    return invalid_input(fmt::format("'{}': reduce of {} inputs needs {} results", inst.name, n, n));
  }
  const hlo::Shape& in_shape = operands[0]->shape;
  for (size_t i = 0; i < n; ++i) {
    if (operands[i]->shape.dims != in_shape.dims) {
      return invalid_input(fmt::format("'{}': reduce inputs have different dimensions", inst.name));
    }
    if (operands[n + i]->shape.element_count() != 1) {
      return invalid_input(fmt::format("'{}': reduce init value {} is not a scalar", inst.name, i));
    }
  }
  std::vector<bool> reduced(in_shape.dims.size(), false);
  for (int64_t d : inst.dimensions) {
    if (d < 0 || d >= in_shape.rank()) {
      return invalid_input(fmt::format("'{}': reduce dimension {} out of range for rank {}", inst.name, d, in_shape.rank()));
    }
    reduced[static_cast<size_t>(d)] = true;
  }
  std::vector<int64_t> out_dims;
  for (size_t d = 0; d < in_shape.dims.size(); ++d) {
    if (!reduced[d]) out_dims.push_back(in_shape.dims[d]);
  }
  for (const hlo::Shape& s : result_shapes) {
    if (!s.is_array() || s.dims != out_dims) {
      return invalid_input(fmt::format("'{}': reduce result {} does not match the kept dimensions [{}]", inst.name,
                                       hlo::to_string(s), fmt::join(out_dims, ",")));
    }
  }
  // Output stride of each input dimension (0 for reduced ones).
  std::vector<int64_t> out_strides_full(in_shape.dims.size(), 0);
  {
    auto out_strides = row_major_strides(out_dims);
    size_t k = 0;
    for (size_t d = 0; d < in_shape.dims.size(); ++d) {
      if (!reduced[d]) out_strides_full[d] = out_strides[k++];
    }
  }
  const auto out_count = static_cast<size_t>(result_shapes[0].element_count());
  std::vector<std::vector<double>> acc(n, std::vector<double>(out_count));
  for (size_t i = 0; i < n; ++i) std::fill(acc[i].begin(), acc[i].end(), operands[n + i]->values[0]);

  std::vector<double> a(n), x(n);
  if (in_shape.element_count() > 0) {
    std::vector<int64_t> index(in_shape.dims.size(), 0);
    size_t flat = 0;
    do {
      int64_t o = 0;
      for (size_t d = 0; d < index.size(); ++d) o += index[d] * out_strides_full[d];
      for (size_t i = 0; i < n; ++i) {
        a[i] = acc[i][static_cast<size_t>(o)];
        x[i] = operands[i]->values[flat];
      }
      SL_RETURN_IF_ERROR(combine(a, x));
      for (size_t i = 0; i < n; ++i) acc[i][static_cast<size_t>(o)] = a[i];
      ++flat;
    } while (next_index(index, in_shape.dims));
  }
  std::vector<Literal> out;
  for (size_t i = 0; i < n; ++i) out.push_back(Literal{result_shapes[i], std::move(acc[i])});
  return out;
}

}  // namespace sl::exec::cpu
