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
