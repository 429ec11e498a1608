// Verifier rules for collectives: one negative test per rule (location and
// message), and the valid forms XLA emits.

#include <gtest/gtest.h>

#include "tests/hlo/verify_test_util.h"

namespace sl::hlo {
namespace {

using testing::expect_error;
using testing::expect_valid;

constexpr std::string_view kSum = R"(
%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
)";

std::string with_sum(std::string_view header, std::string_view entry) {
  return std::string(header) + "\n" + std::string(kSum) + std::string(entry);
}

TEST(VerifyCollectives, ValidForms) {
  // SPMD style: channel_id + use_global_device_ids (flattened ids).
  expect_valid(with_sum("HloModule m, num_partitions=2", R"(
ENTRY %main {
  %p = f32[4,6] parameter(0)
  %q = bf16[2] parameter(1)
  %ag = (f32[8,6], bf16[4]) all-gather(%p, %q), dimensions={0}, replica_groups={{0,1}}, channel_id=1, use_global_device_ids=true
  %rs = f32[4,3] reduce-scatter(%p), dimensions={1}, replica_groups={{0,1}}, channel_id=2, use_global_device_ids=true, to_apply=%sum
  %ar = f32[4,6] all-reduce(%p), replica_groups={{0,1}}, channel_id=3, use_global_device_ids=true, to_apply=%sum
  %cp = f32[4,6] collective-permute(%p), channel_id=4, source_target_pairs={{0,1},{1,0}}
  ROOT %t = ((f32[8,6], bf16[4]), f32[4,3], f32[4,6], f32[4,6]) tuple(%ag, %rs, %ar, %cp)
}
)"));
  // Cross-replica with empty groups (all replicas), iota groups, and
  // cross-replica-and-partition (channel_id alone): group size = replicas x partitions.
  expect_valid(with_sum("HloModule m, replica_count=2, num_partitions=2", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  %ag = f32[8] all-gather(%p), dimensions={0}, replica_groups={}
  %ag2 = f32[8] all-gather(%p), dimensions={0}, replica_groups=[1,2]<=[2]
  %ag3 = f32[16] all-gather(%p), dimensions={0}, replica_groups={{0,1}}, channel_id=1
  %ag4 = f32[8] all-gather(%p), dimensions={0}, replica_groups={{0},{1}}, channel_id=2
  ROOT %t = (f32[8], f32[8], f32[16], f32[8]) tuple(%ag, %ag2, %ag3, %ag4)
}
)"));
  // all-reduce may have groups of different sizes.
  expect_valid(with_sum("HloModule m, replica_count=3", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ar = f32[4] all-reduce(%p), replica_groups={{0},{1,2}}, to_apply=%sum
}
)"));
}

TEST(VerifyCollectives, AllGatherResultShape) {
  std::string text = with_sum("HloModule m, replica_count=4", R"(
ENTRY %main {
  %p = f32[4,2] parameter(0)
  ROOT %ag = f32[8,2] all-gather(%p), dimensions={0}, replica_groups={{0,1,2,3}}
}
)");
  expect_error(text, "%ag =", "all-gather result shape f32[8,2] does not match the inferred shape f32[16,2]");
}

// A one-member group skips the group-size check (XLA's verifier: its counts
// default to 1); the shard count then comes from the shapes, 128 / 32 = 4
// (all_gather_combiner_test's DoNotCombineCrossShardAndCrossReplicaInSPMD).
TEST(VerifyCollectives, OneMemberGroupTakesShardCountFromShapes) {
  expect_valid(with_sum("HloModule m", R"(
ENTRY %main {
  %p = f32[32] parameter(0)
  %ag = f32[128] all-gather(%p), replica_groups={{0}}, dimensions={0}, channel_id=1
  %rs = f32[8] reduce-scatter(%p), replica_groups={{0}}, dimensions={0}, to_apply=%sum
  ROOT %t = (f32[128], f32[8]) tuple(%ag, %rs)
}
)"));
  // The shapes must still agree with that count in the other dimensions.
  expect_error(with_sum("HloModule m", R"(
ENTRY %main {
  %p = f32[32,2] parameter(0)
  ROOT %ag = f32[128,3] all-gather(%p), replica_groups={{0}}, dimensions={0}, channel_id=1
}
)"), "%ag =", "does not match the inferred shape f32[128,2]");
}

TEST(VerifyCollectives, AllGatherNeedsAnOperand) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  ROOT %ag = f32[8] all-gather(), dimensions={0}, replica_groups={{0,1}}
}
)");
  expect_error(text, "%ag =", "all-gather needs at least 1 operand but has 0");
}

TEST(VerifyCollectives, GatherDimensionOutOfRange) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  %p = f32[4,2] parameter(0)
  ROOT %ag = f32[4,4] all-gather(%p), dimensions={2}, replica_groups={{0,1}}
}
)");
  expect_error(text, "%ag =", "all-gather dimension 2 is out of range for operand 0 (f32[4,2]) of rank 2");
}

TEST(VerifyCollectives, GatherDimensionNegative) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  %p = f32[4,2] parameter(0)
  ROOT %ag = f32[4,4] all-gather(%p), dimensions={-1}, replica_groups={{0,1}}
}
)");
  expect_error(text, "%ag =", "all-gather dimension -1 is out of range");
}

TEST(VerifyCollectives, ScatterDimensionMissing) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  %p = f32[4,2] parameter(0)
  ROOT %rs = f32[2,2] reduce-scatter(%p), replica_groups={{0,1}}, to_apply=%sum
}
)");
  expect_error(text, "%rs =", "reduce-scatter needs exactly one dimension (dimensions={d}), found 0");
}

TEST(VerifyCollectives, ReduceScatterNotDivisible) {
  std::string text = with_sum("HloModule m, replica_count=4", R"(
ENTRY %main {
  %p = f32[8,4] parameter(0)
  %q = f32[8,6] parameter(1)
  ROOT %rs = (f32[8,1], f32[8,1]) reduce-scatter(%p, %q), dimensions={1}, replica_groups={{0,1,2,3}}, to_apply=%sum
}
)");
  expect_error(text, "%rs =", "reduce-scatter operand 1 dimension 1 (size 6) is not divisible by the group size 4");
}

TEST(VerifyCollectives, ReduceScatterResultShape) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  %p = f32[8,4] parameter(0)
  ROOT %rs = f32[8,4] reduce-scatter(%p), dimensions={0}, replica_groups={{0,1}}, to_apply=%sum
}
)");
  expect_error(text, "%rs =", "reduce-scatter result shape f32[8,4] does not match the inferred shape f32[4,4]");
}

TEST(VerifyCollectives, SeveralOperandsNeedATupleResult) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  %q = f32[2] parameter(1)
  ROOT %ar = f32[4] all-reduce(%p, %q), replica_groups={{0,1}}, to_apply=%sum
}
)");
  expect_error(text, "%ar =", "all-reduce with 2 operands must produce a tuple of 2 results, but its result shape is f32[4]");
}

TEST(VerifyCollectives, TupleResultArity) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  %q = f32[2] parameter(1)
  ROOT %ag = (f32[8], f32[4], f32[4]) all-gather(%p, %q), dimensions={0}, replica_groups={{0,1}}
}
)");
  expect_error(text, "%ag =", "all-gather with 2 operands must produce a tuple of 2 results");
}

TEST(VerifyCollectives, TupleResultElement) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  %q = bf16[2,3] parameter(1)
  ROOT %ag = (f32[8], bf16[2,3]) all-gather(%p, %q), dimensions={0}, replica_groups={{0,1}}
}
)");
  expect_error(text, "%ag =", "all-gather result 1 has shape bf16[2,3], but operand 1 (bf16[2,3]) gives bf16[4,3] with group size 2");
}

TEST(VerifyCollectives, AllReduceResultShape) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ar = f32[8] all-reduce(%p), replica_groups={{0,1}}, to_apply=%sum
}
)");
  expect_error(text, "%ar =", "all-reduce result shape f32[8] does not match the inferred shape f32[4]");
}

TEST(VerifyCollectives, ToApplyElementType) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  %p = bf16[4] parameter(0)
  ROOT %ar = bf16[4] all-reduce(%p), replica_groups={{0,1}}, to_apply=%sum
}
)");
  expect_error(text, "%ar =", "all-reduce computation %sum parameter 0 has shape f32[], but operand 0 has element type bf16");
}

TEST(VerifyCollectives, ToApplyMixedOperandTypes) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  %q = bf16[4] parameter(1)
  ROOT %ar = (f32[4], bf16[4]) all-reduce(%p, %q), replica_groups={{0,1}}, to_apply=%sum
}
)");
  expect_error(text, "%ar =", "all-reduce operand 1 has element type bf16, but to_apply computation %sum reduces f32");
}

TEST(VerifyCollectives, ToApplyMustBeBinary) {
  std::string text = R"(HloModule m, replica_count=2

%three {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = f32[] parameter(2)
  %s = f32[] add(%a, %b)
  ROOT %t = f32[] add(%s, %c)
}

ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ar = f32[4] all-reduce(%p), replica_groups={{0,1}}, to_apply=%three
}
)";
  expect_error(text, "%ar =", "all-reduce computation %three must take 2 parameters of type f32[], but takes 3");
}

TEST(VerifyCollectives, ToApplyRootType) {
  std::string text = R"(HloModule m, replica_count=2

%bad {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GT
}

ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ar = f32[4] all-reduce(%p), replica_groups={{0,1}}, to_apply=%bad
}
)";
  expect_error(text, "%ar =", "all-reduce computation %bad returns pred[]");
}

TEST(VerifyCollectives, EmptyReplicaGroup) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ar = f32[4] all-reduce(%p), replica_groups={{0,1},{}}, to_apply=%sum
}
)");
  expect_error(text, "%ar =", "all-reduce replica group 1 is empty");
}

TEST(VerifyCollectives, ReplicaIdOutOfRange) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ag = f32[8] all-gather(%p), dimensions={0}, replica_groups={{0,2}}
}
)");
  expect_error(text, "%ag =", "all-gather replica_groups name replica 2, but replica_count is 2 (cross-replica mode)");
}

TEST(VerifyCollectives, PartitionIdOutOfRangeInCrossReplicaAndPartitionMode) {
  // XLA: channel_id without use_global_device_ids means the groups list
  // replica ids, so {{0,1}} is wrong in a 1-replica, 2-partition program.
  std::string text = with_sum("HloModule m, num_partitions=2", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ag = f32[8] all-gather(%p), dimensions={0}, replica_groups={{0,1}}, channel_id=1
}
)");
  expect_error(text, "%ag =",
               "all-gather replica_groups name replica 1, but replica_count is 1 (cross-replica-and-partition mode)");
}

TEST(VerifyCollectives, FlattenedIdOutOfRange) {
  std::string text = with_sum("HloModule m, replica_count=2, num_partitions=2", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ag = f32[8] all-gather(%p), dimensions={0}, replica_groups={{0,4}}, channel_id=1, use_global_device_ids=true
}
)");
  expect_error(text, "%ag =",
               "replica_groups name device 4, but the module has 4 devices (replica_count 2 x num_partitions 2)");
}

TEST(VerifyCollectives, RepeatedReplicaId) {
  std::string text = with_sum("HloModule m, replica_count=4", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ag = f32[8] all-gather(%p), dimensions={0}, replica_groups={{0,1},{1,2}}
}
)");
  expect_error(text, "%ag =", "all-gather replica_groups name replica 1 more than once");
}

TEST(VerifyCollectives, UnequalGroupSizes) {
  std::string text = with_sum("HloModule m, replica_count=3", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ag = f32[4] all-gather(%p), dimensions={0}, replica_groups={{0},{1,2}}
}
)");
  expect_error(text, "%ag =", "all-gather replica groups must have equal sizes: group 0 has 1 members but group 1 has 2");
}

TEST(VerifyCollectives, GroupsMustNameEveryId) {
  std::string text = with_sum("HloModule m, replica_count=4", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ag = f32[8] all-gather(%p), dimensions={0}, replica_groups={{0,1}}
}
)");
  expect_error(text, "%ag =", "all-gather replica_groups do not name replica 2");
}

TEST(VerifyCollectives, GlobalDeviceIdsNeedAChannel) {
  std::string text = with_sum("HloModule m, num_partitions=2", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ag = f32[8] all-gather(%p), dimensions={0}, replica_groups={{0,1}}, use_global_device_ids=true
}
)");
  expect_error(text, "%ag =", "all-gather has use_global_device_ids=true but no channel_id");
}

TEST(VerifyCollectives, FlattenedIdNeedsExplicitGroups) {
  std::string text = with_sum("HloModule m, num_partitions=2", R"(
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ag = f32[8] all-gather(%p), dimensions={0}, replica_groups={}, channel_id=1, use_global_device_ids=true
}
)");
  expect_error(text, "%ag =", "flattened-id mode (use_global_device_ids=true) needs explicit replica_groups");
}

TEST(VerifyCollectives, PermuteDuplicateSource) {
  std::string text = R"(HloModule m, replica_count=4
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %cp = f32[4] collective-permute(%p), source_target_pairs={{0,1},{0,2}}
}
)";
  expect_error(text, "%cp =", "collective-permute source 0 appears more than once in source_target_pairs");
}

TEST(VerifyCollectives, PermuteDuplicateTarget) {
  std::string text = R"(HloModule m, replica_count=4
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %cp = f32[4] collective-permute(%p), source_target_pairs={{0,1},{2,1}}
}
)";
  expect_error(text, "%cp =", "collective-permute target 1 appears more than once in source_target_pairs");
}

TEST(VerifyCollectives, PermutePairOutOfRange) {
  std::string text = R"(HloModule m, num_partitions=2
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %cp = f32[4] collective-permute(%p), channel_id=1, source_target_pairs={{0,1},{1,2}}
}
)";
  expect_error(text, "%cp =",
               "collective-permute target partition 2 is out of range: num_partitions is 2 (cross-partition mode)");
}

TEST(VerifyCollectives, PermuteResultShape) {
  std::string text = R"(HloModule m, replica_count=2
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %cp = f32[8] collective-permute(%p), source_target_pairs={{0,1},{1,0}}
}
)";
  expect_error(text, "%cp =", "collective-permute result shape f32[8] does not match the inferred shape f32[4]");
}

TEST(VerifyCollectives, TokenOperandRejected) {
  std::string text = with_sum("HloModule m, replica_count=2", R"(
ENTRY %main {
  %p = (f32[4]) parameter(0)
  ROOT %ar = (f32[4]) all-reduce(%p), replica_groups={{0,1}}, to_apply=%sum
}
)");
  expect_error(text, "%ar =", "all-reduce operand 0 (%p) has shape (f32[4]), but an array is required");
}

}  // namespace
}  // namespace sl::hlo
