// gather and scatter with XLA's dimension numbers (operational semantics in
// XLA's docs): start indices are clamped for gather, and a scatter update
// whose window does not fit in the operand is skipped as a whole.

#include <fmt/format.h>

#include <algorithm>

#include "core/exec/cpu/array_util.h"
#include "core/exec/cpu/ops.h"

namespace sl::exec::cpu {
namespace {

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

int64_t offset_of(const std::vector<int64_t>& index, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t d = 0; d < index.size(); ++d) off += index[d] * strides[d];
  return off;
}

// The start index vector at batch position `batch` (the index dims without
// index_vector_dim, in order); index_vector_dim == rank means a trailing 1.
struct IndexReader {
  const Literal& indices;
  int64_t index_vector_dim;
  std::vector<int64_t> strides;

  IndexReader(const Literal& l, int64_t ivd) : indices(l), index_vector_dim(ivd), strides(row_major_strides(l.shape.dims)) {}

  int64_t batch_rank() const {
    return indices.shape.rank() - (index_vector_dim < indices.shape.rank() ? 1 : 0);
  }
  // Maps batch position k to its dimension of the indices array.
  int64_t dim_of_batch(int64_t k) const { return k < index_vector_dim ? k : k + 1; }
  int64_t vector_size() const {
    return index_vector_dim < indices.shape.rank() ? indices.shape.dims[static_cast<size_t>(index_vector_dim)] : 1;
  }
  int64_t read(const std::vector<int64_t>& batch, int64_t component) const {
    std::vector<int64_t> full(indices.shape.dims.size(), 0);
    for (size_t k = 0; k < batch.size(); ++k) full[static_cast<size_t>(dim_of_batch(static_cast<int64_t>(k)))] = batch[k];
    if (index_vector_dim < indices.shape.rank()) full[static_cast<size_t>(index_vector_dim)] = component;
    return static_cast<int64_t>(indices.values[static_cast<size_t>(offset_of(full, strides))]);
  }
  // Batch position of indices dimension `dim`.
  int64_t batch_position(int64_t dim) const { return dim < index_vector_dim ? dim : dim - 1; }
};

}  // namespace

Result<Literal> eval_gather(const hlo::Instruction& inst, const Literal& operand, const Literal& indices) {
  const hlo::GatherDims& g = inst.gather;
  const hlo::Shape& shape = inst.shape;
  const int64_t rank = operand.shape.rank();
  if (static_cast<int64_t>(g.slice_sizes.size()) != rank) {
    return invalid_input(fmt::format("'{}': gather needs slice_sizes for all {} operand dimensions", inst.name, rank));
  }
  IndexReader reader(indices, g.index_vector_dim);
  if (reader.vector_size() != static_cast<int64_t>(g.start_index_map.size())) {
    return invalid_input(fmt::format("'{}': index vectors have {} components, start_index_map {}", inst.name,
                                     reader.vector_size(), g.start_index_map.size()));
  }
  // Output dims that are not offset dims are the batch dims, in order.
  std::vector<int64_t> batch_dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (!contains(g.offset_dims, d)) batch_dims.push_back(d);
  }
  // Operand dims that an offset dim walks (neither collapsed nor batching).
  std::vector<int64_t> window_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!contains(g.collapsed_slice_dims, d) && !contains(g.operand_batching_dims, d)) window_dims.push_back(d);
  }
  if (window_dims.size() != g.offset_dims.size() || static_cast<int64_t>(batch_dims.size()) != reader.batch_rank()) {
    return invalid_input(fmt::format("'{}': gather dimension numbers do not match the shapes", inst.name));
  }
  Literal out{shape, std::vector<double>(static_cast<size_t>(shape.element_count()))};
  if (out.values.empty()) return out;
  const auto strides = row_major_strides(operand.shape.dims);
  std::vector<int64_t> index(shape.dims.size(), 0), batch(batch_dims.size()), in(static_cast<size_t>(rank));
  size_t i = 0;
  do {
    for (size_t k = 0; k < batch_dims.size(); ++k) batch[k] = index[static_cast<size_t>(batch_dims[k])];
    std::fill(in.begin(), in.end(), 0);
    for (size_t k = 0; k < g.start_index_map.size(); ++k) {
      const auto d = static_cast<size_t>(g.start_index_map[k]);
      const int64_t hi = operand.shape.dims[d] - g.slice_sizes[d];
      in[d] = std::clamp<int64_t>(reader.read(batch, static_cast<int64_t>(k)), 0, std::max<int64_t>(hi, 0));
    }
    for (size_t k = 0; k < g.operand_batching_dims.size() && k < g.start_indices_batching_dims.size(); ++k) {
      in[static_cast<size_t>(g.operand_batching_dims[k])] =
          batch[static_cast<size_t>(reader.batch_position(g.start_indices_batching_dims[k]))];
    }
    for (size_t k = 0; k < window_dims.size(); ++k) {
      in[static_cast<size_t>(window_dims[k])] += index[static_cast<size_t>(g.offset_dims[k])];
    }
    out.values[i++] = operand.values[static_cast<size_t>(offset_of(in, strides))];
  } while (next_index(index, shape.dims));
  return out;
}

Result<std::vector<Literal>> eval_scatter(const hlo::Instruction& inst, const Operands& operands,
                                          const Combiner& combine) {
  const hlo::ScatterDims& s = inst.scatter;
  if (operands.size() < 3 || operands.size() % 2 != 1) {
    return invalid_input(fmt::format("'{}': scatter takes N operands, the indices and N updates", inst.name));
  }
  const size_t n = operands.size() / 2;
  const Literal& indices = *operands[n];
  const hlo::Shape& op_shape = operands[0]->shape;
  const hlo::Shape& up_shape = operands[n + 1]->shape;
  const int64_t rank = op_shape.rank();
  IndexReader reader(indices, s.index_vector_dim);
  if (reader.vector_size() != static_cast<int64_t>(s.scatter_dims_to_operand_dims.size())) {
    return invalid_input(fmt::format("'{}': index vectors have {} components, scatter_dims_to_operand_dims {}",
                                     inst.name, reader.vector_size(), s.scatter_dims_to_operand_dims.size()));
  }
  std::vector<int64_t> scatter_dims;
  for (int64_t d = 0; d < up_shape.rank(); ++d) {
    if (!contains(s.update_window_dims, d)) scatter_dims.push_back(d);
  }
  std::vector<int64_t> window_dims;  // operand dims the update window walks
  for (int64_t d = 0; d < rank; ++d) {
    if (!contains(s.inserted_window_dims, d) && !contains(s.input_batching_dims, d)) window_dims.push_back(d);
  }
  if (window_dims.size() != s.update_window_dims.size() ||
      static_cast<int64_t>(scatter_dims.size()) != reader.batch_rank()) {
    return invalid_input(fmt::format("'{}': scatter dimension numbers do not match the shapes", inst.name));
  }
  // Size of the update window along each operand dim (1 where inserted).
  std::vector<int64_t> window_size(static_cast<size_t>(rank), 1);
  for (size_t k = 0; k < window_dims.size(); ++k) {
    window_size[static_cast<size_t>(window_dims[k])] = up_shape.dims[static_cast<size_t>(s.update_window_dims[k])];
  }
  std::vector<Literal> out;
  for (size_t k = 0; k < n; ++k) out.push_back(*operands[k]);
  if (up_shape.element_count() == 0) return out;
  const auto strides = row_major_strides(op_shape.dims);
  std::vector<int64_t> index(up_shape.dims.size(), 0), batch(scatter_dims.size()), start(static_cast<size_t>(rank));
  std::vector<double> acc(n), x(n);
  size_t flat = 0;
  do {
    for (size_t k = 0; k < scatter_dims.size(); ++k) batch[k] = index[static_cast<size_t>(scatter_dims[k])];
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < s.scatter_dims_to_operand_dims.size(); ++k) {
      start[static_cast<size_t>(s.scatter_dims_to_operand_dims[k])] = reader.read(batch, static_cast<int64_t>(k));
    }
    for (size_t k = 0; k < s.input_batching_dims.size() && k < s.scatter_indices_batching_dims.size(); ++k) {
      start[static_cast<size_t>(s.input_batching_dims[k])] =
          batch[static_cast<size_t>(reader.batch_position(s.scatter_indices_batching_dims[k]))];
    }
    bool fits = true;
    for (size_t d = 0; d < start.size(); ++d) {
      fits = fits && start[d] >= 0 && start[d] + window_size[d] <= op_shape.dims[d];
    }
    if (fits) {
      std::vector<int64_t> in = start;
      for (size_t k = 0; k < window_dims.size(); ++k) {
        in[static_cast<size_t>(window_dims[k])] += index[static_cast<size_t>(s.update_window_dims[k])];
      }
      const auto off = static_cast<size_t>(offset_of(in, strides));
      for (size_t k = 0; k < n; ++k) {
        acc[k] = out[k].values[off];
        x[k] = operands[n + 1 + k]->values[flat];
      }
      SL_RETURN_IF_ERROR(combine(acc, x));
      for (size_t k = 0; k < n; ++k) out[k].values[off] = round_to_type(acc[k], out[k].shape.type);
    }
    ++flat;
  } while (next_index(index, up_shape.dims));
  return out;
}

}  // namespace sl::exec::cpu
