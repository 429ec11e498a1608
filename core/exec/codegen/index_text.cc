// Index expressions as C++ text (index_text.h).

#include "core/exec/codegen/index_text.h"

#include <fmt/format.h>

namespace sl::exec::codegen {

std::vector<int64_t> row_major(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * dims[d + 1];
  return s;
}

std::string ix(int64_t v) { return fmt::format("(IX){}", v); }

std::string coordinate(const std::string& index, const std::vector<int64_t>& dims, size_t d) {
  const int64_t stride = row_major(dims)[d];
  std::string e = stride == 1 ? index : fmt::format("({} / {})", index, ix(stride));
  if (d != 0 && dims[d] != 1) e = fmt::format("({} % {})", e, ix(dims[d]));
  if (dims[d] == 1) return ix(0);
  return e;
}

std::string linear(const std::vector<std::string>& coords, const std::vector<int64_t>& strides) {
  std::string out;
  for (size_t d = 0; d < coords.size(); ++d) {
    if (coords[d] == ix(0)) continue;
    std::string term = strides[d] == 1 ? coords[d] : fmt::format("{} * {}", coords[d], ix(strides[d]));
    out += out.empty() ? term : " + " + term;
  }
  return out.empty() ? ix(0) : "(" + out + ")";
}

std::vector<int64_t> physical_strides(const hlo::Shape& s) {
  if (s.minor_to_major.size() != s.dims.size()) return row_major(s.dims);
  std::vector<int64_t> strides(s.dims.size(), 1);
  int64_t stride = 1;
  for (int64_t d : s.minor_to_major) {
    strides[static_cast<size_t>(d)] = stride;
    stride *= s.dims[static_cast<size_t>(d)];
  }
  return strides;
}

std::string physical_index(const hlo::Shape& shape, const std::string& index) {
  if (shape.is_row_major() || shape.minor_to_major.size() != shape.dims.size()) return index;
  std::vector<std::string> coords;
  for (size_t d = 0; d < shape.dims.size(); ++d) coords.push_back(coordinate(index, shape.dims, d));
  return linear(coords, physical_strides(shape));
}

std::string logical_index(const hlo::Shape& shape, const std::string& position) {
  if (shape.is_row_major() || shape.minor_to_major.size() != shape.dims.size()) return position;
  const std::vector<int64_t> strides = physical_strides(shape);
  std::vector<std::string> coords;
  for (size_t d = 0; d < shape.dims.size(); ++d) {
    coords.push_back(shape.dims[d] == 1 ? ix(0)
                                        : fmt::format("(({} / {}) % {})", position, ix(strides[d]), ix(shape.dims[d])));
  }
  return linear(coords, row_major(shape.dims));
}

}  // namespace sl::exec::codegen
