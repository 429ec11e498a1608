#pragma once
// Index expressions of generated kernels as C++ text: a row-major linear
// index's coordinates, and the memory position of an element under a
// layout (and back). Internal to core/exec/codegen.

#include <cstdint>
#include <string>
#include <vector>

#include "core/hlo/shape.h"

namespace sl::exec::codegen {

// dims' row-major strides.
std::vector<int64_t> row_major(const std::vector<int64_t>& dims);
// Coordinate d of linear index `index` into `dims`, as C++ text.
std::string coordinate(const std::string& index, const std::vector<int64_t>& dims, size_t d);
// An index constant: "(IX)12".
std::string ix(int64_t v);
// Where the element at row-major linear index `index` of `shape` lies in
// memory under the shape's layout (`index` itself when row-major): buffers
// hold XLA's physical layout, so a bitcast between layouts moves nothing.
std::string physical_index(const hlo::Shape& shape, const std::string& index);
// The inverse: the row-major linear index of the element at memory position
// `position` of `shape` (`position` itself when row-major).
std::string logical_index(const hlo::Shape& shape, const std::string& position);
// Strides of each dimension in memory under the shape's minor_to_major
// layout (none written: row-major).
std::vector<int64_t> physical_strides(const hlo::Shape& s);
// sum_d coords[d] * strides[d] as text, skipping zero terms.
std::string linear(const std::vector<std::string>& coords, const std::vector<int64_t>& strides);

}  // namespace sl::exec::codegen
