// settle_device_counts (verifier.h): command-line counts first, then the
// smallest counts the collectives' device groups need where nothing declared them.

#include <fmt/format.h>

#include <algorithm>

#include "core/hlo/replica_groups.h"
#include "core/hlo/verifier.h"

namespace sl::hlo {
namespace {

// Devices the collectives name, by the kind of id their group mode uses.
struct Needs {
  int64_t replicas = 1;    // replica ids + 1
  int64_t partitions = 1;  // partition ids + 1
  int64_t devices = 1;     // flattened (global) ids + 1
  const Instruction* replicas_from = nullptr;
  const Instruction* partitions_from = nullptr;
  const Instruction* devices_from = nullptr;
  // A group-less all-gather or reduce-scatter whose shapes pin the count
  // wins over the ids collective-permutes name (XLA does not range-check
  // permute ids when there is one device).
  bool replicas_pinned = false, partitions_pinned = false;
};

bool names_devices(const Instruction& inst) {
  const Opcode op = inst.async_wrapped.value_or(inst.opcode);
  return is_collective(op) && (inst.opcode == op || inst.opcode == Opcode::kAsyncStart);
}

void need(int64_t id, int64_t& count, const Instruction*& from, const Instruction& inst) {
  if (id >= 0 && id < (int64_t{1} << 24) && id + 1 > count) {
    count = id + 1;
    from = &inst;
  }
}

// With no groups an all-gather or reduce-scatter spans every participant: its
// shapes say how many there are (all-gather f32[32] -> f32[128] needs 4).
int64_t participants_from_shapes(const Computation& computation, const Instruction& inst) {
  const Opcode op = inst.async_wrapped.value_or(inst.opcode);
  if ((op != Opcode::kAllGather && op != Opcode::kReduceScatter) || inst.operands.empty() ||
      inst.dimensions.size() != 1) {
    return 0;
  }
  const Shape& in = computation.instructions[static_cast<size_t>(inst.operands[0])].shape;
  const Shape* out = &inst.shape;
  // all-gather-start's shape is (operand(s), result(s)).
  if (inst.opcode == Opcode::kAsyncStart && out->is_tuple() && out->elements.size() >= 2) out = &out->elements[1];
  while (out->is_tuple() && !out->elements.empty()) out = &out->elements[0];
  const int64_t d = inst.dimensions[0];
  if (!in.is_array() || !out->is_array() || d < 0 || d >= in.rank() || d >= out->rank()) return 0;
  const int64_t a = in.dims[static_cast<size_t>(d)], b = out->dims[static_cast<size_t>(d)];
  const int64_t small = op == Opcode::kAllGather ? a : b, large = op == Opcode::kAllGather ? b : a;
  if (small <= 0 || large % small != 0) return 0;
  return large / small;
}

void need_ids(const std::vector<int64_t>& ids, GroupMode mode, Needs& needs, const Instruction& inst) {
  for (int64_t id : ids) {
    switch (mode) {
      case GroupMode::kCrossReplica:
      case GroupMode::kCrossReplicaAndPartition:
        need(id, needs.replicas, needs.replicas_from, inst);
        break;
      case GroupMode::kCrossPartition:
        need(id, needs.partitions, needs.partitions_from, inst);
        break;
      case GroupMode::kFlattenedId:
        need(id, needs.devices, needs.devices_from, inst);
        break;
    }
  }
}

Needs collect(const Module& module, Needs& permutes) {
  Needs needs;
  for (const Computation& computation : module.computations) {
    for (const Instruction& inst : computation.instructions) {
      if (!names_devices(inst)) continue;
      Result<GroupMode> mode = group_mode(inst);
      if (!mode) continue;  // the verifier reports it
      std::vector<int64_t> ids, permute_ids;
      const bool grouped = inst.replica_groups && !inst.replica_groups->groups.empty();
      if (grouped) {
        for (const auto& group : inst.replica_groups->groups) ids.insert(ids.end(), group.begin(), group.end());
      }
      for (const auto& [source, target] : inst.source_target_pairs) {
        permute_ids.push_back(source);
        permute_ids.push_back(target);
      }
      const int64_t n = participants_from_shapes(computation, inst);
      if (!grouped && n > 0) {
        ids.push_back(n - 1);
        if (*mode == GroupMode::kCrossPartition) {
          needs.partitions_pinned = true;
        } else if (*mode != GroupMode::kFlattenedId) {
          needs.replicas_pinned = true;
        }
      }
      if (grouped && n > 0 && *mode == GroupMode::kCrossReplicaAndPartition) {
        // Each replica group spans every partition: the shapes say how many.
        const auto size = static_cast<int64_t>(inst.replica_groups->groups[0].size());
        if (size > 0 && n % size == 0 && n / size > 1) need(n / size - 1, needs.partitions, needs.partitions_from, inst);
      }
      need_ids(ids, *mode, needs, inst);
      need_ids(permute_ids, *mode, permutes, inst);
    }
  }
  return needs;
}

// The permutes' needs count where no shapes pinned the count.
Needs merged(Needs needs, const Needs& permutes) {
  if (!needs.replicas_pinned && permutes.replicas > needs.replicas) {
    needs.replicas = permutes.replicas;
    needs.replicas_from = permutes.replicas_from;
  }
  if (!needs.partitions_pinned && permutes.partitions > needs.partitions) {
    needs.partitions = permutes.partitions;
    needs.partitions_from = permutes.partitions_from;
  }
  if (permutes.devices > needs.devices) {
    needs.devices = permutes.devices;
    needs.devices_from = permutes.devices_from;
  }
  return needs;
}

std::string note(const Module& module, const Instruction& inst, std::string message) {
  return fmt::format("{}:{}:{}: note: {}", module.file_name, inst.loc.line, inst.loc.col, message);
}

}  // namespace

std::vector<std::string> settle_device_counts(Module& module, int64_t replicas, int64_t partitions) {
  if (replicas > 0) {
    module.replica_count = replicas;
    module.replica_count_declared = true;
  }
  if (partitions > 0) {
    module.num_partitions = partitions;
    module.num_partitions_declared = true;
  }
  std::vector<std::string> notes;
  if (module.replica_count_declared && module.num_partitions_declared) return notes;
  Needs permutes;
  const Needs needs = merged(collect(module, permutes), permutes);
  if (!module.replica_count_declared && needs.replicas > module.replica_count) {
    module.replica_count = needs.replicas;
    notes.push_back(note(module, *needs.replicas_from,
                         fmt::format("the module declares no replica_count; %{} names replica {}, so replica_count "
                                     "is taken as {} (--replicas sets it)",
                                     needs.replicas_from->name, needs.replicas - 1, needs.replicas)));
  }
  if (!module.num_partitions_declared && needs.partitions > module.num_partitions) {
    module.num_partitions = needs.partitions;
    notes.push_back(note(module, *needs.partitions_from,
                         fmt::format("the module declares no num_partitions; %{} names partition {}, so "
                                     "num_partitions is taken as {} (--partitions sets it)",
                                     needs.partitions_from->name, needs.partitions - 1, needs.partitions)));
  }
  const int64_t devices = module.replica_count * module.num_partitions;
  if (needs.devices > devices && (!module.num_partitions_declared || !module.replica_count_declared)) {
    const bool grow_partitions = !module.num_partitions_declared;
    int64_t& count = grow_partitions ? module.num_partitions : module.replica_count;
    const int64_t other = grow_partitions ? module.replica_count : module.num_partitions;
    count = (needs.devices + other - 1) / other;
    notes.push_back(note(module, *needs.devices_from,
                         fmt::format("the module declares no {}; %{} names device {}, so {} is taken as {} "
                                     "({} devices; {} sets it)",
                                     grow_partitions ? "num_partitions" : "replica_count", needs.devices_from->name,
                                     needs.devices - 1, grow_partitions ? "num_partitions" : "replica_count", count,
                                     module.replica_count * module.num_partitions,
                                     grow_partitions ? "--partitions" : "--replicas")));
  }
  module.warnings.insert(module.warnings.end(), notes.begin(), notes.end());
  return notes;
}

}  // namespace sl::hlo
