#pragma once
// XLA collective group modes and the expansion of replica_groups into the
// concrete groups of global device ids (global id = replica * P + partition).

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/hlo/module.h"

namespace sl::hlo {

enum class GroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };

std::string group_mode_name(GroupMode mode);

// How many ids a replica group may name in this mode, and what they are
// ("replica", "partition" or "device" for flattened ids).
int64_t group_id_space(GroupMode mode, int64_t replica_count, int64_t num_partitions);
const char* group_id_kind(GroupMode mode);

// XLA's GetCollectiveOpGroupMode for this instruction (collectives, and async
// starts that wrap one).
Result<GroupMode> group_mode(const Instruction& collective);

// Every group of global device ids, each in group order (the order in which
// all-gather concatenates and reduce-scatter hands out slices).
Result<std::vector<std::vector<int64_t>>> device_groups(const Instruction& collective,
                                                        int64_t replica_count, int64_t num_partitions);

// The group `device` (global id) belongs to, and its rank there. Error when the
// device is in no group (XLA: "doesn't appear in replica groups").
struct DeviceGroup {
  std::vector<int64_t> devices;  // global ids in group order
  int64_t rank = -1;             // index of the device in `devices`
};
Result<DeviceGroup> group_of(const Instruction& collective, int64_t device, int64_t replica_count,
                             int64_t num_partitions);

// collective-permute: the peers of `device` (global ids; -1 = none). The ids in
// source_target_pairs are replica ids (cross-replica) or partition ids
// (cross-partition), so a pair connects devices of the same partition / replica.
// An in-place permute of N slices may name a device up to N times, to as many
// peers (XLA's CheckDuplicatedSourceOrTarget, which the verifier applies):
// `sends` / `receives` hold every pair's peer in pair order, and send_to /
// recv_from the first.
struct PermutePeers {
  int64_t send_to = -1;
  int64_t recv_from = -1;
  std::vector<int64_t> sends;
  std::vector<int64_t> receives;
};
Result<PermutePeers> permute_peers(const Instruction& collective_permute, int64_t device,
                                   int64_t replica_count, int64_t num_partitions);

}  // namespace sl::hlo
