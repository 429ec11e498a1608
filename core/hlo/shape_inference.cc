#include "core/hlo/shape_inference.h"

#include <fmt/format.h>

#include <set>

#include "core/hlo/replica_groups.h"

namespace sl::hlo {
namespace {

Shape one_or_tuple(std::vector<Shape> results) {
  if (results.size() == 1) return std::move(results[0]);
  return Shape::tuple(std::move(results));
}

// Checks operand i is an array with `dimension` in range; returns its shape.
Result<Shape> array_operand(const std::vector<const Shape*>& operands, size_t i, int64_t dimension) {
  const Shape* in = operands[i];
  if (in == nullptr || !in->is_array()) {
    return invalid_input(fmt::format("operand {} has shape {}, not an array", i, in ? to_string(*in) : "?"));
  }
  if (dimension < 0 || dimension >= in->rank()) {
    return invalid_input(fmt::format("dimension {} is out of range for operand {} of rank {} ({})", dimension, i,
                                     in->rank(), to_string(*in)));
  }
  return *in;
}

Status check_group_size(int64_t group_size) {
  if (group_size < 1) return invalid_input(fmt::format("group size {} is not positive", group_size));
  return ok_status();
}

}  // namespace

Result<Shape> infer_all_gather_shape(const std::vector<const Shape*>& operands, int64_t dimension,
                                     int64_t group_size) {
  if (operands.empty()) return invalid_input("needs at least one operand");
  SL_RETURN_IF_ERROR(check_group_size(group_size));
  std::vector<Shape> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    SL_ASSIGN_OR_RETURN(Shape out, array_operand(operands, i, dimension));
    int64_t& size = out.dims[static_cast<size_t>(dimension)];
    if (__builtin_mul_overflow(size, group_size, &size)) {
      return invalid_input(fmt::format("operand {} dimension {} times the group size {} overflows", i, dimension,
                                       group_size));
    }
    results.push_back(std::move(out));
  }
  return one_or_tuple(std::move(results));
}

Result<Shape> infer_reduce_scatter_shape(const std::vector<const Shape*>& operands, int64_t dimension,
                                         int64_t group_size) {
  if (operands.empty()) return invalid_input("needs at least one operand");
  SL_RETURN_IF_ERROR(check_group_size(group_size));
  std::vector<Shape> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    SL_ASSIGN_OR_RETURN(Shape out, array_operand(operands, i, dimension));
    int64_t& size = out.dims[static_cast<size_t>(dimension)];
    if (size % group_size != 0) {
      return invalid_input(fmt::format("operand {} dimension {} (size {}) is not divisible by the group size {}", i,
                                       dimension, size, group_size));
    }
    size /= group_size;
    results.push_back(std::move(out));
  }
  return one_or_tuple(std::move(results));
}

Result<Shape> infer_all_reduce_shape(const std::vector<const Shape*>& operands) {
  if (operands.empty()) return invalid_input("needs at least one operand");
  std::vector<Shape> results;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i] == nullptr || !operands[i]->is_array()) {
      return invalid_input(fmt::format("operand {} is not an array", i));
    }
    results.push_back(*operands[i]);
  }
  return one_or_tuple(std::move(results));
}

Result<Shape> infer_dot_shape(const Shape& lhs, const Shape& rhs, const DotDims& dims, PrimitiveType result_type) {
  if (!lhs.is_array() || !rhs.is_array()) return invalid_input("operands must be arrays");
  auto check_list = [](const std::vector<int64_t>& list, const Shape& shape, std::string_view side,
                       std::string_view kind, std::set<int64_t>& used) -> Status {
    for (int64_t d : list) {
      if (d < 0 || d >= shape.rank()) {
        return invalid_input(fmt::format("{} {} dimension {} is out of range for {} of rank {}", side, kind, d,
                                         to_string(shape), shape.rank()));
      }
      if (!used.insert(d).second) {
        return invalid_input(fmt::format("{} dimension {} is listed more than once", side, d));
      }
    }
    return ok_status();
  };
  std::set<int64_t> lhs_used, rhs_used;
  SL_RETURN_IF_ERROR(check_list(dims.lhs_batch, lhs, "lhs", "batch", lhs_used));
  SL_RETURN_IF_ERROR(check_list(dims.lhs_contracting, lhs, "lhs", "contracting", lhs_used));
  SL_RETURN_IF_ERROR(check_list(dims.rhs_batch, rhs, "rhs", "batch", rhs_used));
  SL_RETURN_IF_ERROR(check_list(dims.rhs_contracting, rhs, "rhs", "contracting", rhs_used));
  if (dims.lhs_batch.size() != dims.rhs_batch.size()) {
    return invalid_input(fmt::format("lhs has {} batch dimensions but rhs has {}", dims.lhs_batch.size(),
                                     dims.rhs_batch.size()));
  }
  if (dims.lhs_contracting.size() != dims.rhs_contracting.size()) {
    return invalid_input(fmt::format("lhs has {} contracting dimensions but rhs has {}",
                                     dims.lhs_contracting.size(), dims.rhs_contracting.size()));
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < dims.lhs_batch.size(); ++i) {
    int64_t a = lhs.dims[static_cast<size_t>(dims.lhs_batch[i])];
    int64_t b = rhs.dims[static_cast<size_t>(dims.rhs_batch[i])];
    if (a != b) {
      return invalid_input(fmt::format("batch dimension sizes differ: lhs dimension {} is {} but rhs dimension {} is {}",
                                       dims.lhs_batch[i], a, dims.rhs_batch[i], b));
    }
    out.push_back(a);
  }
  for (size_t i = 0; i < dims.lhs_contracting.size(); ++i) {
    int64_t a = lhs.dims[static_cast<size_t>(dims.lhs_contracting[i])];
    int64_t b = rhs.dims[static_cast<size_t>(dims.rhs_contracting[i])];
    if (a != b) {
      return invalid_input(fmt::format(
          "contracting dimension sizes differ: lhs dimension {} is {} but rhs dimension {} is {}",
          dims.lhs_contracting[i], a, dims.rhs_contracting[i], b));
    }
  }
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (!lhs_used.count(d)) out.push_back(lhs.dims[static_cast<size_t>(d)]);
  }
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (!rhs_used.count(d)) out.push_back(rhs.dims[static_cast<size_t>(d)]);
  }
  return Shape::array(result_type, std::move(out));
}

Result<int64_t> collective_group_size(const Instruction& collective, int64_t replica_count, int64_t num_partitions) {
  SL_ASSIGN_OR_RETURN(GroupMode mode, group_mode(collective));
  const bool explicit_groups = collective.replica_groups && !collective.replica_groups->groups.empty();
  const int64_t listed =
      explicit_groups ? static_cast<int64_t>(collective.replica_groups->groups.front().size()) : 0;
  switch (mode) {
    case GroupMode::kCrossReplica:
      return explicit_groups ? listed : replica_count;
    case GroupMode::kCrossPartition:
      return explicit_groups ? listed : num_partitions;
    case GroupMode::kCrossReplicaAndPartition:
      return (explicit_groups ? listed : replica_count) * num_partitions;
    case GroupMode::kFlattenedId:
      if (!explicit_groups) return invalid_input("replica groups must be specified in flattened-id mode");
      return listed;
  }
  return invalid_input("unknown group mode");
}

}  // namespace sl::hlo
