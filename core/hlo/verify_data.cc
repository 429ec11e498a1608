// Data movement ops: shapes of parameter, constant, iota, tuple,
// get-tuple-element, copy, convert, bitcast, broadcast, reshape, transpose,
// slice, dynamic-slice, dynamic-update-slice, concatenate, replica-id,
// partition-id, bitcast-convert, stochastic-convert, get/set-dimension-size.
// Others (dynamic-reshape, iota-like bookkeeping) are accepted as written.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "core/hlo/verify_context.h"

namespace sl::hlo::verify_detail {
namespace {

std::string op_name(const Site& site) { return written_opcode(site.inst); }

bool expect_array_result(const Site& site) {
  if (site.inst.shape.is_array()) return true;
  site.error(fmt::format("{} must produce an array, but its shape is {}", op_name(site), str(site.inst.shape)));
  return false;
}

// Result type equals operand i's type (element types of data ops never change).
bool expect_same_type(const Site& site, size_t i) {
  if (site.inst.shape.type == site.operand_shape(i).type) return true;
  site.error(fmt::format("{} result element type {} differs from operand {} element type {}", op_name(site),
                         primitive_type_name(site.inst.shape.type), i,
                         primitive_type_name(site.operand_shape(i).type)));
  return false;
}

void verify_constant(const Site& site) {
  if (!expect_operand_count(site, 0)) return;
  const Instruction& inst = site.inst;
  if (inst.shape.is_tuple()) return;  // tuple constants are kept as written, values unread
  if (!expect_array_result(site)) return;
  // Complex values are stored as (real, imaginary) pairs.
  const int64_t per_element = is_complex(inst.shape.type) ? 2 : 1;
  const int64_t expected = inst.shape.element_count() * per_element;
  if (!inst.literal.empty() && static_cast<int64_t>(inst.literal.size()) != expected) {
    site.error(fmt::format("constant has {} value{} but its shape {} holds {}", inst.literal.size(),
                           inst.literal.size() == 1 ? "" : "s", str(inst.shape), expected));
  }
}

void verify_iota(const Site& site) {
  if (!expect_operand_count(site, 0) || !expect_array_result(site)) return;
  const int64_t rank = site.inst.shape.rank();
  if (rank == 0) {
    site.error("iota needs a result of rank >= 1");
  } else if (site.inst.iota_dimension < 0 || site.inst.iota_dimension >= rank) {
    site.error(fmt::format("iota_dimension {} is out of range for {} of rank {}", site.inst.iota_dimension,
                           str(site.inst.shape), rank));
  }
}

void verify_get_tuple_element(const Site& site) {
  if (!expect_operand_count(site, 1)) return;
  const Shape& in = site.operand_shape(0);
  if (!in.is_tuple()) {
    site.error(fmt::format("get-tuple-element operand {} has shape {}, which is not a tuple", ref(*site.operands[0]),
                           str(in)));
    return;
  }
  const int64_t index = site.inst.tuple_index;
  if (index < 0 || index >= static_cast<int64_t>(in.elements.size())) {
    site.error(fmt::format("get-tuple-element index {} is out of range for a tuple of {} element{} ({})", index,
                           in.elements.size(), in.elements.size() == 1 ? "" : "s", str(in)));
    return;
  }
  expect_shape(site, in.elements[static_cast<size_t>(index)]);
}

void verify_convert(const Site& site) {
  if (!expect_operand_count(site, 1) || !expect_array_operand(site, 0) || !expect_array_result(site)) return;
  if (site.inst.shape.dims != site.operand_shape(0).dims) {
    site.error(fmt::format("convert result {} must have the dimensions of its operand {}", str(site.inst.shape),
                           str(site.operand_shape(0))));
  }
}

void verify_bitcast(const Site& site) {
  if (!expect_operand_count(site, 1) || !expect_array_operand(site, 0) || !expect_array_result(site)) return;
  if (site.inst.shape.byte_size() != site.operand_shape(0).byte_size()) {
    site.error(fmt::format("bitcast from {} ({} bytes) to {} ({} bytes) changes the size",
                           str(site.operand_shape(0)), site.operand_shape(0).byte_size(), str(site.inst.shape),
                           site.inst.shape.byte_size()));
  }
}

// XLA: equal bit widths keep the dimensions; a wider input gains a minor
// dimension of in_bits / out_bits, a narrower one loses its minor dimension.
void verify_bitcast_convert(const Site& site) {
  if (!expect_operand_count(site, 1) || !expect_array_operand(site, 0) || !expect_array_result(site)) return;
  const Shape& in = site.operand_shape(0);
  const Shape& out = site.inst.shape;
  const int in_bits = primitive_type_bits(in.type);
  const int out_bits = primitive_type_bits(out.type);
  std::vector<int64_t> expected = in.dims;
  if (in_bits > out_bits && out_bits > 0) {
    expected.push_back(in_bits / out_bits);
  } else if (in_bits < out_bits && in_bits > 0) {
    if (in.dims.empty() || in.dims.back() != out_bits / in_bits) {
      site.error(fmt::format("bitcast-convert from {} to the wider {} needs a minor dimension of size {}", str(in),
                             primitive_type_name(out.type), out_bits / in_bits));
      return;
    }
    expected.pop_back();
  }
  if (out.dims != expected) {
    site.error(fmt::format("bitcast-convert from {} to {} must give dimensions [{}]", str(in), str(out),
                           fmt::join(expected, ",")));
  }
}

// stochastic-convert(operand, random bits): same dimensions throughout.
void verify_stochastic_convert(const Site& site) {
  if (!expect_operand_count(site, 2) || !expect_array_operand(site, 0) || !expect_array_operand(site, 1) ||
      !expect_array_result(site)) {
    return;
  }
  const Shape& in = site.operand_shape(0);
  if (site.operand_shape(1).dims != in.dims || site.inst.shape.dims != in.dims) {
    site.error(fmt::format("stochastic-convert operand {}, random bits {} and result {} must have one shape",
                           str(in), str(site.operand_shape(1)), str(site.inst.shape)));
  }
}

void verify_broadcast(const Site& site) {
  if (!expect_operand_count(site, 1) || !expect_array_operand(site, 0) || !expect_array_result(site)) return;
  if (!expect_same_type(site, 0)) return;
  const Shape& in = site.operand_shape(0);
  const Shape& out = site.inst.shape;
  const auto& dims = site.inst.dimensions;
  if (static_cast<int64_t>(dims.size()) != in.rank()) {
    site.error(fmt::format("broadcast operand {} has rank {} but dimensions= lists {} entr{}", str(in), in.rank(),
                           dims.size(), dims.size() == 1 ? "y" : "ies"));
    return;
  }
  std::set<int64_t> used;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    if (d < 0 || d >= out.rank()) {
      site.error(fmt::format("broadcast dimension {} is out of range for the result {} of rank {}", d, str(out),
                             out.rank()));
      return;
    }
    if (!used.insert(d).second) {
      site.error(fmt::format("broadcast dimension {} is listed more than once", d));
      return;
    }
    if (out.dims[static_cast<size_t>(d)] != in.dims[i]) {
      site.error(fmt::format("broadcast operand dimension {} (size {}) does not match result dimension {} (size {})",
                             i, in.dims[i], d, out.dims[static_cast<size_t>(d)]));
    }
  }
}

void verify_reshape(const Site& site) {
  if (!expect_operand_count(site, 1) || !expect_array_operand(site, 0) || !expect_array_result(site)) return;
  if (!expect_same_type(site, 0)) return;
  if (site.inst.shape.element_count() != site.operand_shape(0).element_count()) {
    site.error(fmt::format("reshape from {} ({} elements) to {} ({} elements) changes the element count",
                           str(site.operand_shape(0)), site.operand_shape(0).element_count(), str(site.inst.shape),
                           site.inst.shape.element_count()));
  }
}

void verify_transpose(const Site& site) {
  if (!expect_operand_count(site, 1) || !expect_array_operand(site, 0) || !expect_array_result(site)) return;
  if (!expect_same_type(site, 0)) return;
  const Shape& in = site.operand_shape(0);
  const auto& perm = site.inst.dimensions;
  std::set<int64_t> seen;
  bool permutation = static_cast<int64_t>(perm.size()) == in.rank();
  for (int64_t d : perm) permutation = permutation && d >= 0 && d < in.rank() && seen.insert(d).second;
  if (!permutation) {
    site.error(fmt::format("transpose dimensions={{{}}} is not a permutation of the {} dimensions of {}",
                           fmt::join(perm, ","), in.rank(), str(in)));
    return;
  }
  Shape expected = Shape::array(in.type, {});
  for (int64_t d : perm) expected.dims.push_back(in.dims[static_cast<size_t>(d)]);
  expect_shape(site, expected);
}

void verify_slice(const Site& site) {
  if (!expect_operand_count(site, 1) || !expect_array_operand(site, 0) || !expect_array_result(site)) return;
  if (!expect_same_type(site, 0)) return;
  const Shape& in = site.operand_shape(0);
  const auto& slice = site.inst.slice;
  if (static_cast<int64_t>(slice.size()) != in.rank()) {
    site.error(fmt::format("slice lists {} ranges for an operand of rank {} ({})", slice.size(), in.rank(), str(in)));
    return;
  }
  Shape expected = Shape::array(in.type, {});
  for (size_t i = 0; i < slice.size(); ++i) {
    const SliceDim& s = slice[i];
    if (s.stride < 1 || s.start < 0 || s.start > s.limit || s.limit > in.dims[i]) {
      site.error(fmt::format("slice dimension {} range [{}:{}:{}] is invalid for size {}", i, s.start, s.limit,
                             s.stride, in.dims[i]));
      return;
    }
    const int64_t extent = s.limit - s.start;
    expected.dims.push_back(extent / s.stride + (extent % s.stride != 0 ? 1 : 0));
  }
  expect_shape(site, expected);
}

// Operands first.. are scalar integer start indices, one per dimension of
// `rank`, or one integer vector of `rank` elements (the older form XLA still reads).
bool expect_start_indices(const Site& site, size_t first, int64_t rank) {
  if (site.operand_count() == first + 1 && rank != 1) {
    const Shape& index = site.operand_shape(first);
    if (index.is_array() && index.rank() == 1 && is_integral(index.type) && index.dims[0] == rank) return true;
  }
  if (static_cast<int64_t>(site.operand_count() - first) != rank) {
    site.error(fmt::format("{} needs {} start index operand{} (one per dimension), but has {}", op_name(site), rank,
                           rank == 1 ? "" : "s", site.operand_count() - first));
    return false;
  }
  for (size_t i = first; i < site.operand_count(); ++i) {
    const Shape& index = site.operand_shape(i);
    if (!index.is_array() || index.rank() != 0 || !is_integral(index.type)) {
      site.error(fmt::format("{} start index operand {} must be an integer scalar, but is {}", op_name(site), i,
                             str(index)));
      return false;
    }
  }
  return true;
}

void verify_dynamic_slice(const Site& site) {
  if (!expect_min_operand_count(site, 1) || !expect_array_operand(site, 0) || !expect_array_result(site)) return;
  if (!expect_same_type(site, 0)) return;
  const Shape& in = site.operand_shape(0);
  if (!expect_start_indices(site, 1, in.rank())) return;
  const auto& sizes = site.inst.dynamic_slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != in.rank()) {
    site.error(fmt::format("dynamic-slice lists {} slice sizes for an operand of rank {}", sizes.size(), in.rank()));
    return;
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0 || sizes[i] > in.dims[i]) {
      site.error(fmt::format("dynamic-slice size {} in dimension {} exceeds the operand size {}", sizes[i], i,
                             in.dims[i]));
      return;
    }
  }
  expect_shape(site, Shape::array(in.type, sizes));
}

void verify_dynamic_update_slice(const Site& site) {
  if (!expect_min_operand_count(site, 2) || !expect_array_operand(site, 0) || !expect_array_operand(site, 1)) return;
  const Shape& in = site.operand_shape(0);
  const Shape& update = site.operand_shape(1);
  if (!expect_start_indices(site, 2, in.rank())) return;
  if (update.rank() != in.rank() || update.type != in.type) {
    site.error(fmt::format("dynamic-update-slice update {} must have the rank and element type of the operand {}",
                           str(update), str(in)));
    return;
  }
  for (size_t i = 0; i < in.dims.size(); ++i) {
    if (update.dims[i] > in.dims[i]) {
      site.error(fmt::format("dynamic-update-slice update dimension {} (size {}) exceeds the operand size {}", i,
                             update.dims[i], in.dims[i]));
      return;
    }
  }
  expect_shape(site, in);
}

void verify_concatenate(const Site& site) {
  if (!expect_min_operand_count(site, 1)) return;
  for (size_t i = 0; i < site.operand_count(); ++i) {
    if (!expect_array_operand(site, i)) return;
  }
  if (site.inst.dimensions.size() != 1) {
    site.error(fmt::format("concatenate needs exactly one dimension, found {}", site.inst.dimensions.size()));
    return;
  }
  const int64_t d = site.inst.dimensions[0];
  const Shape& first = site.operand_shape(0);
  if (d < 0 || d >= first.rank()) {
    site.error(fmt::format("concatenate dimension {} is out of range for rank {}", d, first.rank()));
    return;
  }
  Shape expected = first;
  for (size_t i = 1; i < site.operand_count(); ++i) {
    const Shape& in = site.operand_shape(i);
    bool compatible = in.type == first.type && in.rank() == first.rank();
    for (int64_t k = 0; compatible && k < in.rank(); ++k) {
      compatible = k == d || in.dims[static_cast<size_t>(k)] == first.dims[static_cast<size_t>(k)];
    }
    if (!compatible) {
      site.error(fmt::format("concatenate operand {} ({}) does not match operand 0 ({}) outside dimension {}", i,
                             str(in), str(first), d));
      return;
    }
    int64_t& size = expected.dims[static_cast<size_t>(d)];
    if (__builtin_add_overflow(size, in.dims[static_cast<size_t>(d)], &size)) {
      site.error(fmt::format("concatenate result dimension {} overflows", d));
      return;
    }
  }
  expect_shape(site, expected);
}

}  // namespace

void verify_data(const Site& site) {
  switch (site.inst.opcode) {
    case Opcode::kParameter:
      expect_operand_count(site, 0);  // numbering is checked per computation
      return;
    case Opcode::kConstant: verify_constant(site); return;
    case Opcode::kIota: verify_iota(site); return;
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (const Instruction* operand : site.operands) elements.push_back(operand->shape);
      expect_shape(site, Shape::tuple(std::move(elements)));
      return;
    }
    case Opcode::kGetTupleElement: verify_get_tuple_element(site); return;
    case Opcode::kCopy:
      if (expect_operand_count(site, 1)) expect_shape(site, site.operand_shape(0));
      return;
    case Opcode::kConvert: verify_convert(site); return;
    case Opcode::kBitcast: verify_bitcast(site); return;
    case Opcode::kBitcastConvert: verify_bitcast_convert(site); return;
    case Opcode::kStochasticConvert: verify_stochastic_convert(site); return;
    case Opcode::kGetDimensionSize:
      if (expect_operand_count(site, 1)) expect_shape(site, Shape::array(PrimitiveType::kS32, {}));
      return;
    case Opcode::kSetDimensionSize:
      if (expect_operand_count(site, 2)) expect_shape(site, site.operand_shape(0));
      return;
    case Opcode::kBroadcast: verify_broadcast(site); return;
    case Opcode::kReshape: verify_reshape(site); return;
    case Opcode::kTranspose: verify_transpose(site); return;
    case Opcode::kSlice: verify_slice(site); return;
    case Opcode::kDynamicSlice: verify_dynamic_slice(site); return;
    case Opcode::kDynamicUpdateSlice: verify_dynamic_update_slice(site); return;
    case Opcode::kConcatenate: verify_concatenate(site); return;
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      if (expect_operand_count(site, 0)) expect_shape(site, Shape::array(PrimitiveType::kU32, {}));
      return;
    default:
      return;
  }
}

}  // namespace sl::hlo::verify_detail
