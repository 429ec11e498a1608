// Data-movement ops: every output element is some operand element (or an
// index), so no rounding beyond the result type is involved.

#include <fmt/format.h>

#include <algorithm>

#include "core/exec/cpu/array_util.h"
#include "core/exec/cpu/element_bits.h"
#include "core/exec/cpu/ops.h"

namespace sl::exec::cpu {
namespace {

using hlo::Opcode;

Status error(const hlo::Instruction& inst, const std::string& what) {
  return invalid_input(fmt::format("'{}' ({}): {}", inst.name, hlo::opcode_name(inst.opcode), what));
}

Status need_operands(const hlo::Instruction& inst, const Operands& operands, size_t min_count) {
  if (operands.size() < min_count) {
    return error(inst, fmt::format("needs at least {} operand(s), got {}", min_count, operands.size()));
  }
  for (const Literal* l : operands) {
    if (!l->shape.is_array()) return error(inst, "operands must be arrays");
  }
  return ok_status();
}

// Builds the output by mapping each output multi-index to an operand flat
// offset.
template <typename MapFn>
Literal gather(const hlo::Shape& shape, const Literal& operand, MapFn map) {
  Literal out{shape, std::vector<double>(static_cast<size_t>(shape.element_count()))};
  if (out.values.empty()) return out;
  std::vector<int64_t> index(shape.dims.size(), 0);
  size_t i = 0;
  do {
    out.values[i++] = operand.values[static_cast<size_t>(map(index))];
  } while (next_index(index, shape.dims));
  return out;
}

Result<Literal> constant(const hlo::Instruction& inst) {
  const int64_t n = inst.shape.element_count();
  if (!inst.shape.is_array()) return error(inst, "tuple constants are not supported");
  Literal out{inst.shape, {}};
  if (static_cast<int64_t>(inst.literal.size()) == n) {
    out.values = inst.literal;
  } else if (inst.literal.size() == 1) {
    out.values.assign(static_cast<size_t>(n), inst.literal[0]);
  } else {
    return error(inst, fmt::format("has {} values for shape {}", inst.literal.size(), hlo::to_string(inst.shape)));
  }
  for (double& v : out.values) v = round_to_type(v, inst.shape.type);
  return out;
}

Result<Literal> iota(const hlo::Instruction& inst) {
  const hlo::Shape& shape = inst.shape;
  if (inst.iota_dimension < 0 || inst.iota_dimension >= shape.rank()) {
    return error(inst, fmt::format("iota_dimension {} out of range for rank {}", inst.iota_dimension, shape.rank()));
  }
  Literal out{shape, std::vector<double>(static_cast<size_t>(shape.element_count()))};
  if (out.values.empty()) return out;
  std::vector<int64_t> index(shape.dims.size(), 0);
  size_t i = 0;
  do {
    out.values[i++] = round_to_type(static_cast<double>(index[static_cast<size_t>(inst.iota_dimension)]), shape.type);
  } while (next_index(index, shape.dims));
  return out;
}

Result<Literal> broadcast(const hlo::Instruction& inst, const Literal& operand) {
  if (inst.dimensions.size() != operand.shape.dims.size()) {
    return error(inst, fmt::format("dimensions has {} entries for an operand of rank {}", inst.dimensions.size(),
                                   operand.shape.rank()));
  }
  for (size_t k = 0; k < inst.dimensions.size(); ++k) {
    int64_t d = inst.dimensions[k];
    if (d < 0 || d >= inst.shape.rank() || inst.shape.dims[static_cast<size_t>(d)] != operand.shape.dims[k]) {
      return error(inst, fmt::format("operand dimension {} does not map onto result dimension {}", k, d));
    }
  }
  auto strides = row_major_strides(operand.shape.dims);
  return gather(inst.shape, operand, [&](const std::vector<int64_t>& index) {
    int64_t off = 0;
    for (size_t k = 0; k < inst.dimensions.size(); ++k) off += index[static_cast<size_t>(inst.dimensions[k])] * strides[k];
    return off;
  });
}

Result<Literal> transpose(const hlo::Instruction& inst, const Literal& operand) {
  const size_t rank = operand.shape.dims.size();
  if (inst.dimensions.size() != rank || inst.shape.dims.size() != rank) return error(inst, "bad permutation");
  for (size_t i = 0; i < rank; ++i) {
    int64_t d = inst.dimensions[i];
    if (d < 0 || static_cast<size_t>(d) >= rank || inst.shape.dims[i] != operand.shape.dims[static_cast<size_t>(d)]) {
      return error(inst, "permutation does not match the shapes");
    }
  }
  auto strides = row_major_strides(operand.shape.dims);
  return gather(inst.shape, operand, [&](const std::vector<int64_t>& index) {
    int64_t off = 0;
    for (size_t i = 0; i < rank; ++i) off += index[i] * strides[static_cast<size_t>(inst.dimensions[i])];
    return off;
  });
}

Result<Literal> slice(const hlo::Instruction& inst, const Literal& operand) {
  const size_t rank = operand.shape.dims.size();
  if (inst.slice.size() != rank || inst.shape.dims.size() != rank) return error(inst, "slice rank mismatch");
  for (size_t d = 0; d < rank; ++d) {
    const hlo::SliceDim& s = inst.slice[d];
    if (s.stride <= 0 || s.start < 0 || s.limit > operand.shape.dims[d] || s.start > s.limit ||
        (s.limit - s.start + s.stride - 1) / s.stride != inst.shape.dims[d]) {
      return error(inst, fmt::format("slice [{}:{}:{}] does not fit dimension {}", s.start, s.limit, s.stride, d));
    }
  }
  auto strides = row_major_strides(operand.shape.dims);
  return gather(inst.shape, operand, [&](const std::vector<int64_t>& index) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += (inst.slice[d].start + index[d] * inst.slice[d].stride) * strides[d];
    return off;
  });
}

// Start indices of dynamic-slice / dynamic-update-slice: one scalar operand
// per dimension (or one rank-1 operand, the old form), clamped as XLA does to
// [0, dim - size].
Result<std::vector<int64_t>> start_indices(const hlo::Instruction& inst, const Operands& operands, size_t first,
                                           const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes) {
  std::vector<double> raw;
  if (operands.size() == first + 1 && operands[first]->shape.rank() == 1) {
    raw = operands[first]->values;
  } else {
    for (size_t i = first; i < operands.size(); ++i) {
      if (operands[i]->shape.element_count() != 1) return error(inst, "start indices must be scalars");
      raw.push_back(operands[i]->values[0]);
    }
  }
  if (raw.size() != dims.size()) {
    return error(inst, fmt::format("has {} start indices for rank {}", raw.size(), dims.size()));
  }
  std::vector<int64_t> starts(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (sizes[d] > dims[d] || sizes[d] < 0) return error(inst, fmt::format("size {} exceeds dimension {}", sizes[d], d));
    double hi = static_cast<double>(dims[d] - sizes[d]);
    starts[d] = static_cast<int64_t>(std::clamp(raw[d], 0.0, hi));
  }
  return starts;
}

Result<Literal> dynamic_slice(const hlo::Instruction& inst, const Operands& operands) {
  const Literal& operand = *operands[0];
  std::vector<int64_t> sizes = inst.dynamic_slice_sizes.empty() ? inst.shape.dims : inst.dynamic_slice_sizes;
  if (sizes != inst.shape.dims) return error(inst, "dynamic_slice_sizes differ from the result shape");
  SL_ASSIGN_OR_RETURN(auto starts, start_indices(inst, operands, 1, operand.shape.dims, sizes));
  auto strides = row_major_strides(operand.shape.dims);
  return gather(inst.shape, operand, [&](const std::vector<int64_t>& index) {
    int64_t off = 0;
    for (size_t d = 0; d < index.size(); ++d) off += (starts[d] + index[d]) * strides[d];
    return off;
  });
}

Result<Literal> dynamic_update_slice(const hlo::Instruction& inst, const Operands& operands) {
  SL_RETURN_IF_ERROR(need_operands(inst, operands, 2));
  const Literal& operand = *operands[0];
  const Literal& update = *operands[1];
  if (update.shape.rank() != operand.shape.rank()) return error(inst, "update rank differs from the operand's");
  SL_ASSIGN_OR_RETURN(auto starts, start_indices(inst, operands, 2, operand.shape.dims, update.shape.dims));
  Literal out{inst.shape, operand.values};
  if (update.values.empty()) return out;
  auto strides = row_major_strides(operand.shape.dims);
  std::vector<int64_t> index(update.shape.dims.size(), 0);
  size_t i = 0;
  do {
    int64_t off = 0;
    for (size_t d = 0; d < index.size(); ++d) off += (starts[d] + index[d]) * strides[d];
    out.values[static_cast<size_t>(off)] = update.values[i++];
  } while (next_index(index, update.shape.dims));
  return out;
}

Result<Literal> concatenate(const hlo::Instruction& inst, const Operands& operands) {
  if (inst.dimensions.size() != 1) return error(inst, "needs dimensions={d}");
  const int64_t dim = inst.dimensions[0];
  if (dim < 0 || dim >= inst.shape.rank()) return error(inst, "dimension out of range");
  const auto d = static_cast<size_t>(dim);
  int64_t total = 0;
  for (const Literal* l : operands) {
    if (l->shape.rank() != inst.shape.rank()) return error(inst, "operand ranks differ");
    total += l->shape.dims[d];
  }
  if (total != inst.shape.dims[d]) return error(inst, "operand sizes do not add up to the result");
  // Row-major: the result is `outer` blocks, each the concatenation of every
  // operand's block of (its dim size * inner) elements.
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < d; ++k) outer *= inst.shape.dims[k];
  for (size_t k = d + 1; k < inst.shape.dims.size(); ++k) inner *= inst.shape.dims[k];
  Literal out{inst.shape, {}};
  out.values.reserve(static_cast<size_t>(inst.shape.element_count()));
  for (int64_t o = 0; o < outer; ++o) {
    for (const Literal* l : operands) {
      const int64_t block = l->shape.dims[d] * inner;
      auto begin = l->values.begin() + static_cast<ptrdiff_t>(o * block);
      out.values.insert(out.values.end(), begin, begin + static_cast<ptrdiff_t>(block));
    }
  }
  return out;
}

}  // namespace

Result<Literal> eval_data_op(const hlo::Instruction& inst, const Operands& operands) {
  switch (inst.opcode) {
    case Opcode::kConstant:
      return constant(inst);
    case Opcode::kIota:
      return iota(inst);
    default:
      break;
  }
  SL_RETURN_IF_ERROR(need_operands(inst, operands, 1));
  if (!inst.shape.is_array()) return error(inst, "needs an array result");
  const Literal& operand = *operands[0];
  switch (inst.opcode) {
    case Opcode::kBitcast:
      // After optimization XLA writes same-width bitcast-converts as bitcasts
      // that change the element type: the bits are reinterpreted.
      if (operand.shape.type != inst.shape.type && operand.shape.element_count() == inst.shape.element_count() &&
          hlo::primitive_type_bits(operand.shape.type) == hlo::primitive_type_bits(inst.shape.type)) {
        Literal same{hlo::Shape::array(operand.shape.type, inst.shape.dims), operand.values};
        return eval_bitcast_convert(inst.shape, same);
      }
      [[fallthrough]];
    case Opcode::kCopy:
    case Opcode::kReshape:
      if (operand.shape.element_count() != inst.shape.element_count() || operand.shape.type != inst.shape.type) {
        return error(inst, fmt::format("cannot turn {} into {}", hlo::to_string(operand.shape),
                                       hlo::to_string(inst.shape)));
      }
      return Literal{inst.shape, operand.values};
    case Opcode::kBroadcast:
      return broadcast(inst, operand);
    case Opcode::kTranspose:
      return transpose(inst, operand);
    case Opcode::kSlice:
      return slice(inst, operand);
    case Opcode::kDynamicSlice:
      return dynamic_slice(inst, operands);
    case Opcode::kDynamicUpdateSlice:
      return dynamic_update_slice(inst, operands);
    case Opcode::kConcatenate:
      return concatenate(inst, operands);
    default:
      return error(inst, "is not a data-movement op");
  }
}

}  // namespace sl::exec::cpu
