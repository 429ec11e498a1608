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
  if (a.shape != b.shape) return fmt::format("shapes differ ({} vs {})", to_string(a.shape), to_string(b.shape));
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
  return {};
}

}  // namespace

std::string module_difference(const Module& a, const Module& b) {
  if (a.name != b.name) return fmt::format("module names differ ({} vs {})", a.name, b.name);
  if (a.replica_count != b.replica_count) return "replica_count differs";
  if (a.num_partitions != b.num_partitions) return "num_partitions differs";
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
