#include "core/sched/lowering.h"

#include <fmt/format.h>

#include <memory>
#include <span>
#include <unordered_map>

#include "core/common/huge_pages.h"
#include "core/hlo/replica_groups.h"
#include "core/sched/collective_overlap.h"
#include "core/sched/emitter.h"
#include "core/sched/in_place.h"
#include "core/sched/stream_assignment.h"

namespace sl::sched {
namespace {

// Where each device sits in one collective instruction's groups.
struct GroupTable {
  std::vector<std::vector<int64_t>> groups;
  std::vector<int32_t> group_of;  // per device; -1 = in no group
  std::vector<int32_t> rank;
  std::vector<hlo::PermutePeers> peers;  // collective-permute only
};

Result<GroupTable> group_table(const hlo::Instruction& collective, hlo::Opcode op, int64_t replicas,
                               int64_t partitions) {
  const int64_t devices = replicas * partitions;
  GroupTable table;
  SL_ASSIGN_OR_RETURN(table.groups, hlo::device_groups(collective, replicas, partitions));
  table.group_of.assign(static_cast<size_t>(devices), -1);
  table.rank.assign(static_cast<size_t>(devices), -1);
  for (size_t g = 0; g < table.groups.size(); ++g) {
    for (size_t r = 0; r < table.groups[g].size(); ++r) {
      const int64_t device = table.groups[g][r];
      table.group_of[static_cast<size_t>(device)] = static_cast<int32_t>(g);
      table.rank[static_cast<size_t>(device)] = static_cast<int32_t>(r);
    }
  }
  if (op == hlo::Opcode::kCollectivePermute) {
    for (int64_t d = 0; d < devices; ++d) {
      SL_ASSIGN_OR_RETURN(hlo::PermutePeers peers, hlo::permute_peers(collective, d, replicas, partitions));
      table.peers.push_back(peers);
    }
  }
  return table;
}

// Fills each device's group, rank and peers into its copy of the thunks. The
// groups themselves are stored once, in `storage`.
Status fill_devices(std::vector<Thunk>& thunks, ThunkStorage& storage, LoweredProgram& out) {
  const int64_t devices = out.replica_count * out.num_partitions;
  struct StoredTable {
    GroupTable table;
    std::vector<size_t> first_id;  // per group: where it starts in storage.device_ids
  };
  std::vector<size_t> collectives;
  std::unordered_map<const hlo::Instruction*, StoredTable> tables;
  std::vector<const StoredTable*> in_order;  // as first met
  size_t ids = 0;
  for (size_t i = 0; i < thunks.size(); ++i) {
    const Thunk& thunk = thunks[i];
    if (thunk.kind != ThunkKind::kCollective) continue;
    collectives.push_back(i);
    if (tables.count(thunk.instruction)) continue;
    auto table = group_table(*thunk.instruction, thunk.collective.op, out.replica_count, out.num_partitions);
    if (!table.is_ok()) {
      return invalid_input(fmt::format("collective '{}': {}", thunk.instruction->name, table.status().message()));
    }
    StoredTable& stored = tables.emplace(thunk.instruction, StoredTable{std::move(table).value(), {}}).first->second;
    for (const std::vector<int64_t>& group : stored.table.groups) {
      stored.first_id.push_back(ids);
      ids += group.size();
    }
    in_order.push_back(&stored);
  }
  // Filled in full before any span points into it: it must not reallocate.
  storage.device_ids.reserve(ids);
  for (const StoredTable* stored : in_order) {
    for (const std::vector<int64_t>& group : stored->table.groups) {
      storage.device_ids.insert(storage.device_ids.end(), group.begin(), group.end());
    }
  }

  out.devices.resize(static_cast<size_t>(devices));
  for (int64_t d = 0; d < devices; ++d) {
    DeviceProgram& program = out.devices[static_cast<size_t>(d)];
    program.device = d;
    program.replica = d / out.num_partitions;
    program.partition = d % out.num_partitions;
    // The last device takes the template itself: no copy for one device.
    if (d + 1 == devices) {
      program.thunks = std::move(thunks);
    } else {
      reserve_huge(program.thunks, thunks.size());
      program.thunks.assign(thunks.begin(), thunks.end());
    }
    for (size_t i : collectives) {
      Thunk& thunk = program.thunks[i];
      const StoredTable& stored = tables.at(thunk.instruction);
      const GroupTable& table = stored.table;
      const int32_t group = table.group_of[static_cast<size_t>(d)];
      if (group < 0) {
        return invalid_input(fmt::format("collective '{}': device {} (replica {}, partition {}) is in no replica group",
                                         thunk.instruction->name, d, program.replica, program.partition));
      }
      thunk.collective.group = std::span<const int64_t>(storage.device_ids)
                                   .subspan(stored.first_id[static_cast<size_t>(group)],
                                            table.groups[static_cast<size_t>(group)].size());
      thunk.collective.rank_in_group = table.rank[static_cast<size_t>(d)];
      if (!table.peers.empty()) {
        thunk.collective.send_to = table.peers[static_cast<size_t>(d)].send_to;
        thunk.collective.recv_from = table.peers[static_cast<size_t>(d)].recv_from;
      }
    }
  }
  return ok_status();
}

}  // namespace

Result<LoweredProgram> lower(const hlo::Module& module, const LowerOptions& options) {
  LoweredProgram out;
  out.module = &module;
  out.replica_count = options.replica_count > 0 ? options.replica_count : module.replica_count;
  out.num_partitions = options.num_partitions > 0 ? options.num_partitions : module.num_partitions;
  if (out.replica_count < 1 || out.num_partitions < 1) {
    return invalid_input(fmt::format("replica_count ({}) and num_partitions ({}) must be >= 1", out.replica_count,
                                     out.num_partitions));
  }
  if (options.default_trip_count < 0) return usage_error("the default trip count must be >= 0");

  SL_ASSIGN_OR_RETURN(StreamPolicy policy, StreamPolicy::create(module, options.overrides, &out.warnings));
  detail::Emitter emitter(module, policy, options, &out.warnings);
  SL_ASSIGN_OR_RETURN(detail::FlatProgram flat, emitter.run());
  detail::alias_in_place_updates(module, flat);

  // Buffer assignment: one arena layout shared by every device.
  std::vector<LiveInterval> intervals;
  intervals.reserve(flat.buffers.size());
  for (const LogicalBuffer& buffer : flat.buffers) intervals.push_back({buffer.slice.size, buffer.start, buffer.end});
  IntervalAllocation allocation = allocate_intervals(intervals);
  for (size_t i = 0; i < flat.buffers.size(); ++i) flat.buffers[i].slice.offset = allocation.offsets[i];
  auto slice = [&](int32_t id) { return id < 0 ? BufferSlice{} : flat.buffers[static_cast<size_t>(id)].slice; };
  // Every thunk's slices in one array, in the order of the buffer ids: the
  // per-device copies of the thunks then share them.
  auto storage = std::make_shared<ThunkStorage>();
  reserve_huge(storage->slices, flat.buffer_ids.size());
  for (int32_t id : flat.buffer_ids) storage->slices.push_back(slice(id));
  const std::span<const BufferSlice> slices(storage->slices);
  for (size_t i = 0; i < flat.thunks.size(); ++i) {
    Thunk& thunk = flat.thunks[i];
    const detail::ThunkBuffers& ids = flat.buffers_of[i];
    thunk.operands = slices.subspan(ids.first, ids.operands);
    thunk.results = slices.subspan(ids.first + ids.operands, ids.results);
    thunk.workspace = slice(ids.workspace);
  }

  BufferAssignment& buffers = out.buffers;
  buffers.arena_bytes = allocation.arena_bytes;
  buffers.peak_bytes = allocation.peak_bytes;
  for (const detail::Leaves& parameter : flat.parameters) {
    auto& leaves = buffers.parameters.emplace_back();
    for (int32_t id : parameter) leaves.push_back(slice(id));
  }
  for (int32_t id : flat.outputs) buffers.outputs.push_back(slice(id));
  for (const auto& [instruction, id] : flat.constants) buffers.constants.push_back({instruction, slice(id)});
  buffers.buffers = std::move(flat.buffers);
  out.streams = std::move(flat.streams);

  mark_gemms_beside_collectives(flat.thunks);
  SL_RETURN_IF_ERROR(fill_devices(flat.thunks, *storage, out));
  for (DeviceProgram& program : out.devices) {
    program.num_events = flat.num_events;
    program.storage = storage;
  }
  return out;
}

}  // namespace sl::sched
