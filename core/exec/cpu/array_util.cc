#include "core/exec/cpu/array_util.h"

#include "core/exec/cpu/value.h"

namespace sl::exec::cpu {

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

bool next_index(std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  for (size_t i = dims.size(); i-- > 0;) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

Literal zeros_literal(const hlo::Shape& shape) {
  Literal out{shape, {}};
  out.values.assign(static_cast<size_t>(shape.element_count()), 0.0);
  return out;
}

Value zeros_value(const hlo::Shape& shape) {
  if (!shape.is_tuple()) return Value::of(zeros_literal(shape));
  std::vector<Value> elements;
  for (const hlo::Shape& e : shape.elements) elements.push_back(zeros_value(e));
  return Value::tuple(std::move(elements));
}

}  // namespace sl::exec::cpu

namespace sl::exec::cpu {
namespace {

// Offset of each logical (row-major) element in a buffer laid out with
// `minor_to_major` (empty: row-major).
std::vector<int64_t> physical_offsets(const std::vector<int64_t>& dims, const std::vector<int64_t>& minor_to_major) {
  std::vector<int64_t> strides = row_major_strides(dims);
  if (minor_to_major.size() == dims.size()) {
    int64_t stride = 1;
    for (int64_t d : minor_to_major) {
      strides[static_cast<size_t>(d)] = stride;
      stride *= dims[static_cast<size_t>(d)];
    }
  }
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(count));
  if (count == 0) return out;
  std::vector<int64_t> index(dims.size(), 0);
  do {
    int64_t off = 0;
    for (size_t d = 0; d < dims.size(); ++d) off += index[d] * strides[d];
    out.push_back(off);
  } while (next_index(index, dims));
  return out;
}

}  // namespace

Literal bitcast_between_layouts(const Literal& operand, const std::vector<int64_t>& operand_minor_to_major,
                                const hlo::Shape& result, const std::vector<int64_t>& result_minor_to_major) {
  const auto from = physical_offsets(operand.shape.dims, operand_minor_to_major);
  std::vector<double> buffer(operand.values.size());
  for (size_t i = 0; i < from.size(); ++i) buffer[static_cast<size_t>(from[i])] = operand.values[i];
  const auto to = physical_offsets(result.dims, result_minor_to_major);
  Literal out{result, std::vector<double>(to.size())};
  for (size_t i = 0; i < to.size(); ++i) out.values[i] = buffer[static_cast<size_t>(to[i])];
  return out;
}

}  // namespace sl::exec::cpu
