#include "core/hlo/replica_groups.h"

#include <fmt/format.h>

#include <optional>

namespace sl::hlo {
namespace {

// The collective an instruction stands for: itself, or the op a sugared
// `<op>-start`/`<op>-done` wraps (its attributes live on the start).
std::optional<Opcode> collective_opcode(const Instruction& instruction) {
  Opcode op = instruction.async_wrapped.value_or(instruction.opcode);
  if (!is_collective(op)) return std::nullopt;
  return op;
}

Status not_a_collective(const Instruction& instruction) {
  return invalid_input(fmt::format("'{}' ({}) is not a collective", instruction.name,
                                   opcode_name(instruction.opcode)));
}


}  // namespace

// How many ids a replica group may name in this mode (replica, partition or
// flattened device ids).
int64_t group_id_space(GroupMode mode, int64_t replica_count, int64_t num_partitions) {
  switch (mode) {
    case GroupMode::kCrossReplica:
    case GroupMode::kCrossReplicaAndPartition:
      return replica_count;
    case GroupMode::kCrossPartition:
      return num_partitions;
    case GroupMode::kFlattenedId:
      return replica_count * num_partitions;
  }
  return 0;
}

const char* group_id_kind(GroupMode mode) {
  switch (mode) {
    case GroupMode::kCrossReplica:
    case GroupMode::kCrossReplicaAndPartition:
      return "replica";
    case GroupMode::kCrossPartition:
      return "partition";
    case GroupMode::kFlattenedId:
      return "device";
  }
  return "";
}

std::string group_mode_name(GroupMode mode) {
  switch (mode) {
    case GroupMode::kCrossReplica:
      return "cross-replica";
    case GroupMode::kCrossPartition:
      return "cross-partition";
    case GroupMode::kCrossReplicaAndPartition:
      return "cross-replica-and-partition";
    case GroupMode::kFlattenedId:
      return "flattened-id";
  }
  return "unknown";
}

// XLA: all-gather, all-reduce and reduce-scatter always carry a (possibly
// false) use_global_device_ids; collective-permute carries none, so with a
// channel_id it is always cross-partition.
Result<GroupMode> group_mode(const Instruction& collective) {
  std::optional<Opcode> op = collective_opcode(collective);
  if (!op) return not_a_collective(collective);
  const bool has_channel_id = collective.channel_id.has_value();
  std::optional<bool> use_global;
  if (*op != Opcode::kCollectivePermute) use_global = collective.use_global_device_ids.value_or(false);

  if (!has_channel_id) {
    if (use_global.value_or(false)) {
      return invalid_input(fmt::format(
          "'{}': use_global_device_ids=true requires a channel_id (invalid combination of "
          "channel_id and use_global_device_ids)",
          collective.name));
    }
    return GroupMode::kCrossReplica;
  }
  if (!use_global) return GroupMode::kCrossPartition;
  return *use_global ? GroupMode::kFlattenedId : GroupMode::kCrossReplicaAndPartition;
}

Result<std::vector<std::vector<int64_t>>> device_groups(const Instruction& collective,
                                                        int64_t replica_count, int64_t num_partitions) {
  if (replica_count < 1 || num_partitions < 1) {
    return invalid_input(fmt::format("'{}': replica_count ({}) and num_partitions ({}) must be >= 1",
                                     collective.name, replica_count, num_partitions));
  }
  SL_ASSIGN_OR_RETURN(GroupMode mode, group_mode(collective));
  const int64_t space = group_id_space(mode, replica_count, num_partitions);

  std::vector<std::vector<int64_t>> id_groups;
  if (collective.replica_groups && !collective.replica_groups->groups.empty()) {
    id_groups = collective.replica_groups->groups;
  } else {
    if (mode == GroupMode::kFlattenedId) {
      return invalid_input(fmt::format("'{}': replica groups must be specified in flattened-id mode",
                                       collective.name));
    }
    std::vector<int64_t> all(static_cast<size_t>(space));
    for (int64_t i = 0; i < space; ++i) all[static_cast<size_t>(i)] = i;
    id_groups.push_back(std::move(all));
  }

  std::vector<char> seen(static_cast<size_t>(space), 0);
  for (const auto& group : id_groups) {
    if (group.empty()) return invalid_input(fmt::format("'{}': empty replica group", collective.name));
    for (int64_t id : group) {
      if (id < 0 || id >= space) {
        return invalid_input(fmt::format("'{}': {} id {} in replica_groups is out of range [0, {}) ({} mode)",
                                         collective.name, group_id_kind(mode), id, space, group_mode_name(mode)));
      }
      if (seen[static_cast<size_t>(id)]) {
        return invalid_input(
            fmt::format("'{}': {} id {} appears twice in replica_groups", collective.name, group_id_kind(mode), id));
      }
      seen[static_cast<size_t>(id)] = 1;
    }
  }

  const int64_t P = num_partitions;
  std::vector<std::vector<int64_t>> out;
  switch (mode) {
    case GroupMode::kCrossReplica:
      // One group per (replica group, partition): the replicas of one partition.
      for (const auto& group : id_groups) {
        for (int64_t p = 0; p < P; ++p) {
          auto& devices = out.emplace_back();
          for (int64_t r : group) devices.push_back(r * P + p);
        }
      }
      break;
    case GroupMode::kCrossPartition:
      // One group per (partition group, replica): the partitions of one replica.
      for (const auto& group : id_groups) {
        for (int64_t r = 0; r < replica_count; ++r) {
          auto& devices = out.emplace_back();
          for (int64_t p : group) devices.push_back(r * P + p);
        }
      }
      break;
    case GroupMode::kCrossReplicaAndPartition:
      // Every partition of every listed replica, replica-major.
      for (const auto& group : id_groups) {
        auto& devices = out.emplace_back();
        for (int64_t r : group) {
          for (int64_t p = 0; p < P; ++p) devices.push_back(r * P + p);
        }
      }
      break;
    case GroupMode::kFlattenedId:
      out = id_groups;
      break;
  }
  return out;
}

Result<DeviceGroup> group_of(const Instruction& collective, int64_t device, int64_t replica_count,
                             int64_t num_partitions) {
  if (device < 0 || device >= replica_count * num_partitions) {
    return invalid_input(fmt::format("'{}': device {} is out of range [0, {})", collective.name, device,
                                     replica_count * num_partitions));
  }
  SL_ASSIGN_OR_RETURN(auto groups, device_groups(collective, replica_count, num_partitions));
  for (auto& group : groups) {
    for (size_t i = 0; i < group.size(); ++i) {
      if (group[i] == device) return DeviceGroup{std::move(group), static_cast<int64_t>(i)};
    }
  }
  return invalid_input(
      fmt::format("'{}': device {} does not appear in replica_groups", collective.name, device));
}

Result<PermutePeers> permute_peers(const Instruction& collective_permute, int64_t device,
                                   int64_t replica_count, int64_t num_partitions) {
  if (collective_opcode(collective_permute) != Opcode::kCollectivePermute) {
    return invalid_input(fmt::format("'{}' is not a collective-permute", collective_permute.name));
  }
  if (device < 0 || device >= replica_count * num_partitions) {
    return invalid_input(fmt::format("'{}': device {} is out of range [0, {})", collective_permute.name,
                                     device, replica_count * num_partitions));
  }
  SL_ASSIGN_OR_RETURN(GroupMode mode, group_mode(collective_permute));
  const int64_t P = num_partitions;
  const int64_t replica = device / P;
  const int64_t partition = device % P;
  const bool by_partition = mode == GroupMode::kCrossPartition;
  const int64_t space = by_partition ? num_partitions : replica_count;
  const int64_t self = by_partition ? partition : replica;
  auto to_device = [&](int64_t id) { return by_partition ? replica * P + id : id * P + partition; };

  PermutePeers peers;
  for (const auto& [source, target] : collective_permute.source_target_pairs) {
    // With one participant XLA does not range-check the ids (its verifier's
    // `limit == 1 ||`): a pair naming a device that does not exist moves nothing.
    if (space == 1 && source >= 0 && target >= 0 && (source >= space || target >= space)) continue;
    for (int64_t id : {source, target}) {
      if (id < 0 || id >= space) {
        return invalid_input(fmt::format("'{}': {} id {} in source_target_pairs is out of range [0, {})",
                                         collective_permute.name, by_partition ? "partition" : "replica", id,
                                         space));
      }
    }
    if (source == self) peers.sends.push_back(to_device(target));
    if (target == self) peers.receives.push_back(to_device(source));
  }
  if (!peers.sends.empty()) peers.send_to = peers.sends.front();
  if (!peers.receives.empty()) peers.recv_from = peers.receives.front();
  return peers;
}

}  // namespace sl::hlo
