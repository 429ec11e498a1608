// Collectives (docs/program-format.md): operand counts, gather/scatter dimension,
// replica groups per XLA group mode, source-target pairs, to_apply and the
// inferred result shapes. Sugared starts reach here with the result part of
// their shape (verify_async.cc).

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

#include "core/hlo/replica_groups.h"
#include "core/hlo/shape_inference.h"
#include "core/hlo/verify_context.h"

namespace sl::hlo::verify_detail {
namespace {

int64_t id_space(GroupMode mode, const Module& module) {
  return group_id_space(mode, module.replica_count, module.num_partitions);
}

std::string space_text(GroupMode mode, const Module& module) {
  switch (mode) {
    case GroupMode::kCrossReplica:
    case GroupMode::kCrossReplicaAndPartition:
      return fmt::format("replica_count is {}", module.replica_count);
    case GroupMode::kCrossPartition:
      return fmt::format("num_partitions is {}", module.num_partitions);
    case GroupMode::kFlattenedId:
      return fmt::format("the module has {} devices (replica_count {} x num_partitions {})",
                         module.replica_count * module.num_partitions, module.replica_count, module.num_partitions);
  }
  return "";
}

std::string name_of(const Site& site, Opcode op) {
  // A sugared start carries the collective's attributes; name it as written.
  return site.inst.opcode == op ? std::string(opcode_name(op)) : written_opcode(site.inst);
}

// Checks replica_groups against the group mode; returns the group size, or
// nullopt after reporting.
std::optional<int64_t> check_replica_groups(const Site& site, Opcode op) {
  const std::string what = name_of(site, op);
  Result<GroupMode> mode_or = group_mode(site.inst);
  if (!mode_or) {
    site.error(fmt::format("{} has use_global_device_ids=true but no channel_id (flattened-id mode needs a channel_id)",
                           what));
    return std::nullopt;
  }
  const GroupMode mode = *mode_or;
  const Module& module = site.module;
  static const std::vector<std::vector<int64_t>> kNone;
  const auto& groups = site.inst.replica_groups ? site.inst.replica_groups->groups : kNone;
  if (groups.empty() && mode == GroupMode::kFlattenedId) {
    site.error(fmt::format("{} in flattened-id mode (use_global_device_ids=true) needs explicit replica_groups", what));
    return std::nullopt;
  }

  const int64_t space = id_space(mode, module);
  const char* word = group_id_kind(mode);
  bool ok = true;
  std::set<int64_t> seen;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty()) {
      site.error(fmt::format("{} replica group {} is empty", what, g));
      ok = false;
      continue;
    }
    for (int64_t id : groups[g]) {
      if (id < 0 || id >= space) {
        site.error(fmt::format("{} replica_groups name {} {}, but {} ({} mode)", what, word, id,
                               space_text(mode, module), group_mode_name(mode)));
        ok = false;
      } else if (!seen.insert(id).second) {
        site.error(fmt::format("{} replica_groups name {} {} more than once", what, word, id));
        ok = false;
      }
    }
  }
  if (!ok) return std::nullopt;
  // XLA's verifier lets all-to-all groups leave devices out (hlo_parser_test's
  // AllToAllWithSubgroupsIotaList: 32 of 40 replicas).
  if (!groups.empty() && static_cast<int64_t>(seen.size()) != space && op != Opcode::kAllToAll) {
    int64_t missing = 0;
    while (seen.count(missing)) ++missing;
    site.error(fmt::format("{} replica_groups do not name {} {}: in {} mode every {} id in [0, {}) must appear once",
                           what, word, missing, group_mode_name(mode), word, space));
    return std::nullopt;
  }
  if (op != Opcode::kAllReduce) {
    for (size_t g = 1; g < groups.size(); ++g) {
      if (groups[g].size() != groups[0].size()) {
        site.error(fmt::format("{} replica groups must have equal sizes: group 0 has {} members but group {} has {}",
                               what, groups[0].size(), g, groups[g].size()));
        return std::nullopt;
      }
    }
  }
  Result<int64_t> size = collective_group_size(site.inst, module.replica_count, module.num_partitions);
  if (!size) {
    site.error(fmt::format("{}: {}", what, size.status().message()));
    return std::nullopt;
  }
  return *size;
}

void check_source_target_pairs(const Site& site) {
  const std::string what = name_of(site, Opcode::kCollectivePermute);
  Result<GroupMode> mode_or = group_mode(site.inst);
  const GroupMode mode = mode_or ? *mode_or : GroupMode::kCrossReplica;
  const int64_t space = id_space(mode, site.module);
  const char* word = group_id_kind(mode);
  // An in-place permute whose offsets are a tuple of N index tuples moves N
  // slices: each id may appear N times (XLA's CheckDuplicatedSourceOrTarget).
  size_t allowed = 1;
  if (is_in_place_permute(site)) {
    const Shape& offsets = site.operand_shape(2);
    if (offsets.is_tuple() && !offsets.elements.empty() && offsets.elements[0].is_tuple()) {
      allowed = offsets.elements.size();
    }
  }
  std::multiset<int64_t> sources, targets;
  for (const auto& [source, target] : site.inst.source_target_pairs) {
    for (auto [id, role] : {std::pair{source, "source"}, std::pair{target, "target"}}) {
      // XLA range-checks the ids only when there is more than one to choose
      // from (`limit == 1 ||` in its verifier).
      if (id < 0 || (space > 1 && id >= space)) {
        site.error(fmt::format("{} {} {} {} is out of range: {} ({} mode)", what, role, word, id,
                               space_text(mode, site.module), group_mode_name(mode)));
      }
    }
    sources.insert(source);
    targets.insert(target);
    if (sources.count(source) == allowed + 1) {
      site.error(fmt::format("{} source {} appears more than {} in source_target_pairs", what, source,
                             allowed == 1 ? std::string("once") : fmt::format("{} times", allowed)));
    }
    if (targets.count(target) == allowed + 1) {
      site.error(fmt::format("{} target {} appears more than {} in source_target_pairs", what, target,
                             allowed == 1 ? std::string("once") : fmt::format("{} times", allowed)));
    }
  }
}

// Gather/scatter dimension: exactly one, in range for every operand.
std::optional<int64_t> check_dimension(const Site& site, Opcode op) {
  const std::string what = name_of(site, op);
  if (site.inst.dimensions.size() != 1) {
    site.error(fmt::format("{} needs exactly one dimension (dimensions={{d}}), found {}", what,
                           site.inst.dimensions.size()));
    return std::nullopt;
  }
  const int64_t d = site.inst.dimensions[0];
  bool ok = true;
  for (size_t i = 0; i < site.operand_count(); ++i) {
    const Shape& in = site.operand_shape(i);
    if (!in.is_array()) continue;  // reported by the caller
    if (d < 0 || d >= in.rank()) {
      site.error(fmt::format("{} dimension {} is out of range for operand {} ({}) of rank {}", what, d, i,
                             str(in), in.rank()));
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return d;
}

void check_reducer(const Site& site, Opcode op) {
  const Computation* callee = called_computation(site, 0, "to_apply");
  if (callee == nullptr || site.operand_count() == 0) return;
  const PrimitiveType type = site.operand_shape(0).type;
  expect_reducer(site, *callee, type, "operand 0");
  for (size_t i = 1; i < site.operand_count(); ++i) {
    if (site.operand_shape(i).type != type) {
      site.error(fmt::format("{} operand {} has element type {}, but to_apply computation %{} reduces {}",
                             name_of(site, op), i, primitive_type_name(site.operand_shape(i).type), callee->name,
                             primitive_type_name(type)));
    }
  }
}

std::string group_text(int64_t group_size) {
  return group_size > 0 ? fmt::format(" with group size {}", group_size) : std::string();
}

// One result per operand, then each result equal to the inferred one.
void check_result(const Site& site, Opcode op, const Shape& result, const Shape& expected, int64_t group_size) {
  const std::string what = name_of(site, op);
  const size_t n = site.operand_count();
  // all-to-all without dimensions is the tuple form, a tuple even for one operand.
  const bool tuple_form = op == Opcode::kAllToAll && site.inst.dimensions.empty() && result.is_tuple();
  if (n > 1 || tuple_form) {
    if (!result.is_tuple() || result.elements.size() != n) {
      site.error(fmt::format("{} with {} operands must produce a tuple of {} results, but its result shape is {}",
                             what, n, n, str(result)));
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      const Shape& want = expected.is_tuple() ? expected.elements[i] : expected;
      if (result.elements[i] != want) {
        site.error(fmt::format("{} result {} has shape {}, but operand {} ({}) gives {}{}", what, i,
                               str(result.elements[i]), i, str(site.operand_shape(i)), str(want),
                               group_text(group_size)));
      }
    }
    return;
  }
  if (result != expected) {
    site.error(fmt::format("{} result shape {} does not match the inferred shape {} (operand {}{})", what,
                           str(result), str(expected), str(site.operand_shape(0)), group_text(group_size)));
  }
}

// XLA's CeilOfRatio of the first operand's and result's sizes in the
// gathered (scattered) dimension; 0 when the shapes do not say.
int64_t shard_count_from_shapes(const Site& site, Opcode op, const Shape& result, int64_t dimension) {
  const Shape& in = site.operand_shape(0);
  const Shape& out = result.is_tuple() ? (result.elements.empty() ? result : result.elements[0]) : result;
  if (!in.is_array() || !out.is_array() || dimension >= in.rank() || dimension >= out.rank()) return 0;
  const int64_t a = in.dims[static_cast<size_t>(dimension)], b = out.dims[static_cast<size_t>(dimension)];
  const int64_t num = op == Opcode::kAllGather ? b : a, den = op == Opcode::kAllGather ? a : b;
  if (num <= 0 || den <= 0) return 0;
  return (num + den - 1) / den;
}

}  // namespace

bool is_in_place_permute(const Site& site) {
  // Four operands whose offsets are tuples of indices (a combined permute of
  // four arrays has array operands only).
  return site.operand_count() == 4 && (site.operand_shape(2).is_tuple() || site.operand_shape(3).is_tuple());
}

void verify_collective(const Site& site, Opcode op, const Shape* result) {
  const std::string what = name_of(site, op);
  if (!expect_min_operand_count(site, 1)) return;
  const bool in_place = op == Opcode::kCollectivePermute && is_in_place_permute(site);
  bool arrays = true;
  // The in-place permute's offsets (operands 2 and 3) are tuples of indices.
  const size_t array_operands = in_place ? 2 : site.operand_count();
  for (size_t i = 0; i < array_operands; ++i) arrays = expect_array_operand(site, i) && arrays;

  std::optional<int64_t> group_size;
  if (op == Opcode::kCollectivePermute) {
    check_source_target_pairs(site);
    group_size = 0;  // a permute has no group: out = in
  } else {
    group_size = check_replica_groups(site, op);
  }
  if (op == Opcode::kReduceScatter || op == Opcode::kAllReduce) check_reducer(site, op);

  std::optional<int64_t> dimension;
  if (op == Opcode::kAllGather || op == Opcode::kReduceScatter) {
    dimension = check_dimension(site, op);
    if (!dimension) return;
  }
  if (!arrays || !group_size || result == nullptr) return;
  if (op == Opcode::kRaggedAllToAll) {
    // (input, output, input_offsets, send_sizes, output_offsets, recv_sizes) -> output.
    if (site.operand_count() != 6) {
      site.error(fmt::format("{} takes 6 operands (input, output, input_offsets, send_sizes, output_offsets, "
                             "recv_sizes), but has {}",
                             what, site.operand_count()));
    } else if (*result != site.operand_shape(1)) {
      site.error(fmt::format("{} result shape {} must equal its output operand {}", what, str(*result),
                             str(site.operand_shape(1))));
    }
    return;
  }
  if (op == Opcode::kCollectiveReduce) return;  // no shape rule in XLA's verifier to follow here
  if (in_place) {
    // XLA writes into the output operand: the result is its shape.
    if (*result != site.operand_shape(1)) {
      site.error(fmt::format("{} (in place) result shape {} must equal its output operand {}", what, str(*result),
                             str(site.operand_shape(1))));
    }
    return;
  }

  if ((op == Opcode::kAllGather || op == Opcode::kReduceScatter) && *group_size == 1) {
    // XLA skips the group check when the group has one member (its counts
    // default to 1) and takes the shard count from the shapes instead.
    if (const int64_t shards = shard_count_from_shapes(site, op, *result, *dimension); shards > 0) {
      group_size = shards;
    }
  }
  const std::vector<const Shape*> in = site.operand_shapes();
  Result<Shape> expected = op == Opcode::kAllGather        ? infer_all_gather_shape(in, *dimension, *group_size)
                           : op == Opcode::kReduceScatter ? infer_reduce_scatter_shape(in, *dimension, *group_size)
                                                          : infer_all_reduce_shape(in);
  if (!expected) {
    site.error(fmt::format("{} {}", what, expected.status().message()));
    return;
  }
  check_result(site, op, *result, *expected, *group_size);
}

}  // namespace sl::hlo::verify_detail
