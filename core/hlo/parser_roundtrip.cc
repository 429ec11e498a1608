#include "core/hlo/parser_roundtrip.h"

#include <fmt/format.h>

#include <cmath>

namespace sl::hlo {
namespace {

bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (a[i] != b[i]) return false;
  }
  return true;
}

bool same_groups(const std::optional<ReplicaGroups>& a, const std::optional<ReplicaGroups>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || a->groups == b->groups;
}

bool same_window(const std::vector<WindowDim>& a, const std::vector<WindowDim>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const WindowDim &x = a[i], &y = b[i];
    if (x.size != y.size || x.stride != y.stride || x.padding_low != y.padding_low ||
        x.padding_high != y.padding_high || x.base_dilation != y.base_dilation ||
        x.window_dilation != y.window_dilation || x.window_reversal != y.window_reversal) {
      return false;
    }
  }
  return true;
}

bool same_padding(const std::vector<PadDim>& a, const std::vector<PadDim>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].low != b[i].low || a[i].high != b[i].high || a[i].interior != b[i].interior) return false;
  }
  return true;
}

bool same_gather(const GatherDims& a, const GatherDims& b) {
  return a.offset_dims == b.offset_dims && a.collapsed_slice_dims == b.collapsed_slice_dims &&
         a.start_index_map == b.start_index_map && a.operand_batching_dims == b.operand_batching_dims &&
         a.start_indices_batching_dims == b.start_indices_batching_dims && a.index_vector_dim == b.index_vector_dim &&
         a.slice_sizes == b.slice_sizes && a.indices_are_sorted == b.indices_are_sorted;
}

bool same_scatter(const ScatterDims& a, const ScatterDims& b) {
  return a.update_window_dims == b.update_window_dims && a.inserted_window_dims == b.inserted_window_dims &&
         a.scatter_dims_to_operand_dims == b.scatter_dims_to_operand_dims &&
         a.input_batching_dims == b.input_batching_dims &&
         a.scatter_indices_batching_dims == b.scatter_indices_batching_dims &&
         a.index_vector_dim == b.index_vector_dim && a.indices_are_sorted == b.indices_are_sorted &&
         a.unique_indices == b.unique_indices;
}

bool same_metadata(const OpMetadata& a, const OpMetadata& b) {
  return a.op_type == b.op_type && a.op_name == b.op_name && a.source_file == b.source_file &&
         a.deduplicated_name == b.deduplicated_name &&
         a.source_line == b.source_line && a.stack_frame_id == b.stack_frame_id;
}

bool same_slice(const std::vector<SliceDim>& a, const std::vector<SliceDim>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].start != b[i].start || a[i].limit != b[i].limit || a[i].stride != b[i].stride) return false;
  }
  return true;
}

std::string instruction_difference(const Instruction& a, const Instruction& b) {
  if (a.name != b.name) return fmt::format("names differ (%{} vs %{})", a.name, b.name);
  if (a.opcode != b.opcode) return fmt::format("opcodes differ ({} vs {})", opcode_name(a.opcode), opcode_name(b.opcode));
  if (a.async_wrapped != b.async_wrapped) return "async_wrapped differs";
  if (a.shape != b.shape || to_string_with_layout(a.shape) != to_string_with_layout(b.shape)) {
    return fmt::format("shapes differ ({} vs {})", to_string_with_layout(a.shape), to_string_with_layout(b.shape));
  }
  if (a.operands != b.operands) return "operands differ";
  if (a.is_root != b.is_root) return "ROOT marks differ";
  if (a.parameter_number != b.parameter_number) return "parameter numbers differ";
  if (!same_values(a.literal, b.literal)) return "constant values differ";
  if (a.tuple_index != b.tuple_index) return "index differs";
  if (a.iota_dimension != b.iota_dimension) return "iota_dimension differs";
  if (a.dimensions != b.dimensions) return "dimensions differ";
  if (!same_slice(a.slice, b.slice)) return "slice differs";
  if (a.dynamic_slice_sizes != b.dynamic_slice_sizes) return "dynamic_slice_sizes differ";
  if (a.comparison_direction != b.comparison_direction) return "direction differs";
  if (a.comparison_type != b.comparison_type) return "comparison type differs";
  if (a.dot.lhs_contracting != b.dot.lhs_contracting || a.dot.rhs_contracting != b.dot.rhs_contracting ||
      a.dot.lhs_batch != b.dot.lhs_batch || a.dot.rhs_batch != b.dot.rhs_batch) {
    return "dot dimensions differ";
  }
  if (!same_groups(a.replica_groups, b.replica_groups)) return "replica_groups differ";
  if (a.channel_id != b.channel_id) return "channel_id differs";
  if (a.use_global_device_ids != b.use_global_device_ids) return "use_global_device_ids differs";
  if (a.source_target_pairs != b.source_target_pairs) return "source_target_pairs differ";
  if (a.called != b.called) return "called computations differ";
  if (a.fusion_kind != b.fusion_kind) return "fusion kind differs";
  if (a.custom_call_target != b.custom_call_target) return "custom_call_target differs";
  if (a.backend_config != b.backend_config) return "backend_config differs";
  if (a.operation_queue_id != b.operation_queue_id) return "operation_queue_id differs";
  if (a.known_trip_count != b.known_trip_count) return "known_trip_count differs";
  if (a.frontend_attributes != b.frontend_attributes) return "frontend_attributes differ";
  if (!same_gather(a.gather, b.gather)) return "gather dimension numbers differ";
  if (!same_scatter(a.scatter, b.scatter)) return "scatter dimension numbers differ";
  if (!same_window(a.window, b.window)) return "window differs";
  if (!same_padding(a.padding, b.padding)) return "padding differs";
  if (a.is_stable != b.is_stable || a.k != b.k || a.largest != b.largest) return "sort/topk attributes differ";
  if (a.rng_algorithm != b.rng_algorithm || a.rng_distribution != b.rng_distribution) return "rng attributes differ";
  if (a.exponent_bits != b.exponent_bits || a.mantissa_bits != b.mantissa_bits) return "reduce-precision bits differ";
  if (a.dim_labels != b.dim_labels || a.feature_group_count != b.feature_group_count ||
      a.batch_group_count != b.batch_group_count) {
    return "convolution attributes differ";
  }
  if (a.wait_on_operation_queues != b.wait_on_operation_queues) return "wait_on_operation_queues differ";
  if (a.gemm_config.has_value() != b.gemm_config.has_value()) return "gemm_config differs";
  if (a.control_predecessors != b.control_predecessors) return "control-predecessors differ";
  if (a.async_execution_thread != b.async_execution_thread) return "async_execution_thread differs";
  if (!same_metadata(a.metadata, b.metadata)) return "metadata differs";
  if (a.attributes != b.attributes) return "kept attributes differ";
  return {};
}

}  // namespace

std::string module_difference(const Module& a, const Module& b) {
  if (a.name != b.name) return fmt::format("module names differ ({} vs {})", a.name, b.name);
  if (a.replica_count != b.replica_count) return "replica_count differs";
  if (a.num_partitions != b.num_partitions) return "num_partitions differs";
  if (a.is_scheduled != b.is_scheduled) return "is_scheduled differs";
  if (a.replica_count_declared != b.replica_count_declared || a.num_partitions_declared != b.num_partitions_declared) {
    return "declared device counts differ";
  }
  {
    const StackFrameTables &x = a.stack_frames, &y = b.stack_frames;
    bool same = x.file_names == y.file_names && x.function_names == y.function_names &&
                x.locations.size() == y.locations.size() && x.frames.size() == y.frames.size();
    for (size_t i = 0; same && i < x.locations.size(); ++i) {
      const auto &l = x.locations[i], &m = y.locations[i];
      same = l.file_id == m.file_id && l.function_id == m.function_id && l.line == m.line &&
             l.end_line == m.end_line && l.column == m.column && l.end_column == m.end_column;
    }
    for (size_t i = 0; same && i < x.frames.size(); ++i) {
      same = x.frames[i].location_id == y.frames[i].location_id &&
             x.frames[i].parent_frame_id == y.frames[i].parent_frame_id;
    }
    if (!same) return "stack frame tables differ";
  }
  if (a.entry != b.entry) return "entry computations differ";
  if (a.computations.size() != b.computations.size()) {
    return fmt::format("computation counts differ ({} vs {})", a.computations.size(), b.computations.size());
  }
  for (size_t c = 0; c < a.computations.size(); ++c) {
    const Computation& ca = a.computations[c];
    const Computation& cb = b.computations[c];
    if (ca.name != cb.name) return fmt::format("computation {} names differ (%{} vs %{})", c, ca.name, cb.name);
    if (ca.root != cb.root) return fmt::format("computation %{}: roots differ", ca.name);
    if (ca.parameters != cb.parameters) return fmt::format("computation %{}: parameters differ", ca.name);
    if (ca.is_entry != cb.is_entry) return fmt::format("computation %{}: ENTRY marks differ", ca.name);
    if (ca.declared_parameters != cb.declared_parameters || ca.declared_result != cb.declared_result) {
      return fmt::format("computation %{}: declared signatures differ", ca.name);
    }
    if (ca.instructions.size() != cb.instructions.size()) {
      return fmt::format("computation %{}: instruction counts differ ({} vs {})", ca.name, ca.instructions.size(),
                         cb.instructions.size());
    }
    for (size_t i = 0; i < ca.instructions.size(); ++i) {
      std::string why = instruction_difference(ca.instructions[i], cb.instructions[i]);
      if (!why.empty()) {
        return fmt::format("computation %{} instruction %{}: {}", ca.name, ca.instructions[i].name, why);
      }
    }
  }
  return {};
}

}  // namespace sl::hlo
