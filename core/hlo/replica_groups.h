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

// XLA's GetCollectiveOpGroupMode for this instruction (collectives, and async
// starts that wrap one).
Result<GroupMode> group_mode(const Instruction& collective);

// Every group of global device ids, each in group order (the order in which
// all-gather concatenates and reduce-scatter hands out slices).
Result<std::vector<std::vector<int64_t>>> device_groups(const Instruction& collective,
                                                        int64_t replica_count, int64_t num_partitions);

}  // namespace sl::hlo
