// Shape inference for the indexing and window ops (gather, pad, windows),
// following XLA's ShapeInference.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "core/hlo/shape_inference.h"

namespace sl::hlo {
namespace {

// Every entry of `list` is a distinct dimension in [0, rank).
Status check_dims(const std::vector<int64_t>& list, int64_t rank, std::string_view what) {
  std::set<int64_t> seen;
  for (int64_t d : list) {
    if (d < 0 || d >= rank) {
      return invalid_input(fmt::format("{} {{{}}} names dimension {}, out of range for rank {}", what,
                                       fmt::join(list, ","), d, rank));
    }
    if (!seen.insert(d).second) {
      return invalid_input(fmt::format("{} {{{}}} names dimension {} twice", what, fmt::join(list, ","), d));
    }
  }
  return ok_status();
}

}  // namespace

Result<Shape> infer_gather_shape(const Shape& operand, const Shape& start_indices, const GatherDims& dims) {
  if (!operand.is_array() || !start_indices.is_array()) return invalid_input("operand and start indices must be arrays");
  if (!is_integral(start_indices.type)) {
    return invalid_input(fmt::format("start indices must be integers, but are {}", to_string(start_indices)));
  }
  const int64_t index_rank = start_indices.rank();
  if (dims.index_vector_dim < 0 || dims.index_vector_dim > index_rank) {
    return invalid_input(fmt::format("index_vector_dim {} is out of range for start indices of rank {}",
                                     dims.index_vector_dim, index_rank));
  }
  // index_vector_dim == rank means an implicit trailing index vector of size 1.
  const int64_t vector_size =
      dims.index_vector_dim == index_rank ? 1 : start_indices.dims[static_cast<size_t>(dims.index_vector_dim)];
  if (static_cast<int64_t>(dims.start_index_map.size()) != vector_size) {
    return invalid_input(fmt::format("start_index_map has {} entries but the index vector has {}",
                                     dims.start_index_map.size(), vector_size));
  }
  if (static_cast<int64_t>(dims.slice_sizes.size()) != operand.rank()) {
    return invalid_input(fmt::format("slice_sizes has {} entries for an operand of rank {}", dims.slice_sizes.size(),
                                     operand.rank()));
  }
  SL_RETURN_IF_ERROR(check_dims(dims.start_index_map, operand.rank(), "start_index_map"));
  SL_RETURN_IF_ERROR(check_dims(dims.collapsed_slice_dims, operand.rank(), "collapsed_slice_dims"));
  SL_RETURN_IF_ERROR(check_dims(dims.operand_batching_dims, operand.rank(), "operand_batching_dims"));
  for (size_t i = 0; i < dims.slice_sizes.size(); ++i) {
    if (dims.slice_sizes[i] < 0 || dims.slice_sizes[i] > operand.dims[i]) {
      return invalid_input(fmt::format("slice size {} in dimension {} is outside [0, {}]", dims.slice_sizes[i], i,
                                       operand.dims[i]));
    }
  }
  for (int64_t d : dims.collapsed_slice_dims) {
    if (dims.slice_sizes[static_cast<size_t>(d)] > 1) {
      return invalid_input(fmt::format("collapsed dimension {} has slice size {}, but at most 1 is allowed", d,
                                       dims.slice_sizes[static_cast<size_t>(d)]));
    }
  }
  std::vector<int64_t> offsets;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const bool collapsed = std::count(dims.collapsed_slice_dims.begin(), dims.collapsed_slice_dims.end(), d) > 0;
    const bool batching = std::count(dims.operand_batching_dims.begin(), dims.operand_batching_dims.end(), d) > 0;
    if (!collapsed && !batching) offsets.push_back(dims.slice_sizes[static_cast<size_t>(d)]);
  }
  if (offsets.size() != dims.offset_dims.size()) {
    return invalid_input(fmt::format("offset_dims has {} entries but the slice keeps {} dimensions",
                                     dims.offset_dims.size(), offsets.size()));
  }
  std::vector<int64_t> batch;
  for (int64_t d = 0; d < index_rank; ++d) {
    if (d != dims.index_vector_dim) batch.push_back(start_indices.dims[static_cast<size_t>(d)]);
  }
  const int64_t out_rank = static_cast<int64_t>(batch.size() + offsets.size());
  SL_RETURN_IF_ERROR(check_dims(dims.offset_dims, out_rank, "offset_dims"));
  Shape out = Shape::array(operand.type, {});
  size_t next_offset = 0, next_batch = 0;
  for (int64_t d = 0; d < out_rank; ++d) {
    const bool offset = std::count(dims.offset_dims.begin(), dims.offset_dims.end(), d) > 0;
    out.dims.push_back(offset ? offsets[next_offset++] : batch[next_batch++]);
  }
  return out;
}

Result<Shape> infer_pad_shape(const Shape& operand, const std::vector<PadDim>& padding) {
  if (!operand.is_array()) return invalid_input("operand must be an array");
  if (static_cast<int64_t>(padding.size()) != operand.rank()) {
    return invalid_input(fmt::format("padding lists {} dimensions for an operand of rank {}", padding.size(),
                                     operand.rank()));
  }
  Shape out = Shape::array(operand.type, {});
  for (size_t i = 0; i < padding.size(); ++i) {
    const PadDim& p = padding[i];
    const int64_t size = operand.dims[i];
    if (p.interior < 0) return invalid_input(fmt::format("interior padding {} in dimension {} is negative", p.interior, i));
    int64_t extent = size + p.low + p.high;
    if (size > 0) extent += (size - 1) * p.interior;
    if (extent < 0) {
      return invalid_input(fmt::format("padding {}_{}_{} leaves dimension {} (size {}) with a negative size", p.low,
                                       p.high, p.interior, i, size));
    }
    out.dims.push_back(extent);
  }
  return out;
}

Result<std::vector<int64_t>> infer_window_dims(const std::vector<int64_t>& base, const std::vector<WindowDim>& window) {
  if (window.size() != base.size()) {
    return invalid_input(fmt::format("window has {} dimensions but the input has rank {}", window.size(), base.size()));
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < base.size(); ++i) {
    const WindowDim& w = window[i];
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return invalid_input(fmt::format("window dimension {} has size {}, stride {}, dilations {} and {}: all must be "
                                       ">= 1",
                                       i, w.size, w.stride, w.base_dilation, w.window_dilation));
    }
    const int64_t dilated_base = base[i] == 0 ? 0 : (base[i] - 1) * w.base_dilation + 1;
    const int64_t padded = dilated_base + w.padding_low + w.padding_high;
    const int64_t dilated_window = (w.size - 1) * w.window_dilation + 1;
    out.push_back(padded < dilated_window ? 0 : (padded - dilated_window) / w.stride + 1);
  }
  return out;
}

}  // namespace sl::hlo
