#include "core/hlo/replica_groups.h"

#include <gtest/gtest.h>

namespace sl::hlo {
namespace {

using Groups = std::vector<std::vector<int64_t>>;

Instruction collective(Opcode op, std::optional<int64_t> channel_id, std::optional<bool> use_global,
                       Groups groups) {
  Instruction instruction;
  instruction.name = "c";
  instruction.opcode = op;
  instruction.channel_id = channel_id;
  instruction.use_global_device_ids = use_global;
  instruction.replica_groups = ReplicaGroups{std::move(groups), ""};
  return instruction;
}

GroupMode mode_of(const Instruction& instruction) {
  auto mode = group_mode(instruction);
  EXPECT_TRUE(mode.is_ok()) << mode.status().message();
  return mode.is_ok() ? *mode : GroupMode::kCrossReplica;
}

TEST(GroupMode, FollowsXlaTruthTable) {
  for (Opcode op : {Opcode::kAllGather, Opcode::kAllReduce, Opcode::kReduceScatter}) {
    EXPECT_EQ(mode_of(collective(op, std::nullopt, std::nullopt, {})), GroupMode::kCrossReplica);
    EXPECT_EQ(mode_of(collective(op, std::nullopt, false, {})), GroupMode::kCrossReplica);
    EXPECT_FALSE(group_mode(collective(op, std::nullopt, true, {})).is_ok());
    // These ops always carry use_global_device_ids (default false).
    EXPECT_EQ(mode_of(collective(op, 1, std::nullopt, {})), GroupMode::kCrossReplicaAndPartition);
    EXPECT_EQ(mode_of(collective(op, 1, false, {})), GroupMode::kCrossReplicaAndPartition);
    EXPECT_EQ(mode_of(collective(op, 1, true, {{0, 1}})), GroupMode::kFlattenedId);
  }
  EXPECT_EQ(mode_of(collective(Opcode::kCollectivePermute, std::nullopt, std::nullopt, {})),
            GroupMode::kCrossReplica);
  EXPECT_EQ(mode_of(collective(Opcode::kCollectivePermute, 1, std::nullopt, {})), GroupMode::kCrossPartition);
}

TEST(GroupMode, SugaredAsyncStartUsesWrappedOp) {
  Instruction start = collective(Opcode::kAsyncStart, 3, std::nullopt, {});
  start.async_wrapped = Opcode::kAllGather;
  EXPECT_EQ(mode_of(start), GroupMode::kCrossReplicaAndPartition);
  Instruction add;
  add.opcode = Opcode::kAdd;
  EXPECT_FALSE(group_mode(add).is_ok());
}

TEST(DeviceGroups, CrossReplicaGroupsReplicasOfEachPartition) {
  // R=4, P=2: device = r*2 + p.
  auto groups = device_groups(collective(Opcode::kAllReduce, std::nullopt, std::nullopt, {{0, 1}, {3, 2}}), 4, 2);
  ASSERT_TRUE(groups.is_ok()) << groups.status().message();
  EXPECT_EQ(*groups, (Groups{{0, 2}, {1, 3}, {6, 4}, {7, 5}}));
}

TEST(DeviceGroups, EmptyGroupsMeanAllParticipants) {
  auto replicas = device_groups(collective(Opcode::kAllReduce, std::nullopt, std::nullopt, {}), 2, 2);
  ASSERT_TRUE(replicas.is_ok());
  EXPECT_EQ(*replicas, (Groups{{0, 2}, {1, 3}}));
  auto partitions = device_groups(collective(Opcode::kCollectivePermute, 5, std::nullopt, {}), 2, 3);
  ASSERT_TRUE(partitions.is_ok());
  EXPECT_EQ(*partitions, (Groups{{0, 1, 2}, {3, 4, 5}}));
  auto both = device_groups(collective(Opcode::kAllGather, 5, false, {}), 2, 2);
  ASSERT_TRUE(both.is_ok());
  EXPECT_EQ(*both, (Groups{{0, 1, 2, 3}}));
  // No replica_groups attribute at all behaves like {}.
  Instruction bare = collective(Opcode::kAllReduce, std::nullopt, std::nullopt, {});
  bare.replica_groups.reset();
  auto bare_groups = device_groups(bare, 3, 1);
  ASSERT_TRUE(bare_groups.is_ok());
  EXPECT_EQ(*bare_groups, (Groups{{0, 1, 2}}));
}

TEST(DeviceGroups, CrossPartitionGroupsPartitionsOfEachReplica) {
  Instruction cp = collective(Opcode::kCollectivePermute, 1, std::nullopt, {{1, 0}});
  auto groups = device_groups(cp, 3, 2);
  ASSERT_TRUE(groups.is_ok());
  EXPECT_EQ(*groups, (Groups{{1, 0}, {3, 2}, {5, 4}}));
}

TEST(DeviceGroups, CrossReplicaAndPartitionIsReplicaMajor) {
  auto groups = device_groups(collective(Opcode::kAllGather, 1, false, {{1, 0}, {2, 3}}), 4, 2);
  ASSERT_TRUE(groups.is_ok());
  EXPECT_EQ(*groups, (Groups{{2, 3, 0, 1}, {4, 5, 6, 7}}));
}

TEST(DeviceGroups, FlattenedIdsAreDeviceIds) {
  auto groups = device_groups(collective(Opcode::kReduceScatter, 1, true, {{3, 0}, {1, 2}}), 2, 2);
  ASSERT_TRUE(groups.is_ok());
  EXPECT_EQ(*groups, (Groups{{3, 0}, {1, 2}}));
  EXPECT_FALSE(device_groups(collective(Opcode::kReduceScatter, 1, true, {}), 2, 2).is_ok());
}

TEST(DeviceGroups, OutOfRangeAndRepeatedIdsAreErrors) {
  auto replica = device_groups(collective(Opcode::kAllReduce, std::nullopt, std::nullopt, {{0, 4}}), 4, 2);
  ASSERT_FALSE(replica.is_ok());
  EXPECT_NE(replica.status().message().find("out of range"), std::string::npos);
  EXPECT_FALSE(device_groups(collective(Opcode::kAllReduce, 1, true, {{0, 8}}), 4, 2).is_ok());
  EXPECT_TRUE(device_groups(collective(Opcode::kAllReduce, 1, true, {{0, 7}}), 4, 2).is_ok());
  EXPECT_FALSE(device_groups(collective(Opcode::kAllReduce, std::nullopt, std::nullopt, {{-1}}), 4, 2).is_ok());
  EXPECT_FALSE(device_groups(collective(Opcode::kAllReduce, std::nullopt, std::nullopt, {{0, 1}, {1}}), 4, 1).is_ok());
  EXPECT_FALSE(device_groups(collective(Opcode::kAllReduce, std::nullopt, std::nullopt, {}), 0, 1).is_ok());
}

TEST(GroupOf, FindsGroupAndRank) {
  Instruction ag = collective(Opcode::kAllGather, std::nullopt, std::nullopt, {{2, 0}, {1, 3}});
  auto group = group_of(ag, 2, 4, 1);
  ASSERT_TRUE(group.is_ok());
  EXPECT_EQ(group->devices, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(group->rank, 0);
  auto missing = group_of(collective(Opcode::kAllGather, std::nullopt, std::nullopt, {{0, 1}}), 3, 4, 1);
  EXPECT_FALSE(missing.is_ok());
  EXPECT_FALSE(group_of(ag, 9, 4, 1).is_ok());
}

TEST(PermutePeers, CrossReplicaPairsStayInPartition) {
  Instruction cp = collective(Opcode::kCollectivePermute, std::nullopt, std::nullopt, {});
  cp.replica_groups.reset();
  cp.source_target_pairs = {{0, 1}, {1, 2}};
  // R=3, P=2, device 3 = replica 1 partition 1.
  auto peers = permute_peers(cp, 3, 3, 2);
  ASSERT_TRUE(peers.is_ok());
  EXPECT_EQ(peers->send_to, 5);
  EXPECT_EQ(peers->recv_from, 1);
  auto first = permute_peers(cp, 0, 3, 2);
  ASSERT_TRUE(first.is_ok());
  EXPECT_EQ(first->send_to, 2);
  EXPECT_EQ(first->recv_from, -1);  // receives nothing: zeros
}

TEST(PermutePeers, CrossPartitionPairsStayInReplica) {
  Instruction cp = collective(Opcode::kCollectivePermute, 7, std::nullopt, {});
  cp.source_target_pairs = {{0, 1}, {1, 0}};
  auto peers = permute_peers(cp, 2, 2, 2);  // replica 1 partition 0
  ASSERT_TRUE(peers.is_ok());
  EXPECT_EQ(peers->send_to, 3);
  EXPECT_EQ(peers->recv_from, 3);
  cp.source_target_pairs = {{0, 2}};
  EXPECT_FALSE(permute_peers(cp, 0, 2, 2).is_ok());
  // A device named twice (an in-place permute of two slices; the verifier
  // limits the count) has two peers, the first in send_to.
  cp.source_target_pairs = {{0, 1}, {0, 0}};
  auto both = permute_peers(cp, 0, 2, 2);
  ASSERT_TRUE(both.is_ok()) << both.status().message();
  EXPECT_EQ(both->sends, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(both->send_to, 1);
  EXPECT_EQ(both->receives, (std::vector<int64_t>{0}));
}

TEST(PermutePeers, OneDeviceIgnoresPairsBeyondItAndRepeatedPairsAreOnePeer) {
  Instruction cp = collective(Opcode::kCollectivePermute, std::nullopt, std::nullopt, {});
  cp.replica_groups.reset();
  cp.source_target_pairs = {{0, 1}};
  auto alone = permute_peers(cp, 0, 1, 1);
  ASSERT_TRUE(alone.is_ok()) << alone.status().message();
  EXPECT_EQ(alone->send_to, -1);
  EXPECT_EQ(alone->recv_from, -1);
  cp.source_target_pairs = {{0, 1}, {0, 1}};  // an in-place permute of two slices
  auto twice = permute_peers(cp, 0, 2, 1);
  ASSERT_TRUE(twice.is_ok()) << twice.status().message();
  EXPECT_EQ(twice->send_to, 1);
  cp.source_target_pairs = {{0, 1}, {0, 2}};  // one device sending to two peers
  auto two = permute_peers(cp, 0, 3, 1);
  ASSERT_TRUE(two.is_ok()) << two.status().message();
  EXPECT_EQ(two->sends, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(two->recv_from, -1);
  auto target = permute_peers(cp, 2, 3, 1);
  ASSERT_TRUE(target.is_ok());
  EXPECT_EQ(target->receives, (std::vector<int64_t>{0}));
  cp.source_target_pairs = {{0, 2}};
  EXPECT_FALSE(permute_peers(cp, 0, 2, 1).is_ok()) << "with two replicas ids are range-checked";
}

}  // namespace
}  // namespace sl::hlo
