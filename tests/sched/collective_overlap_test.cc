// Which GEMMs lowering marks as running beside a collective.

#include "core/sched/collective_overlap.h"

#include <gtest/gtest.h>

#include "tests/sched/sched_test_util.h"

namespace sl::sched {
namespace {

using testing::find_thunk;
using testing::lower_text;

bool beside(const testing::Lowered& l, const char* name, int occurrence = 0, size_t device = 0) {
  int i = find_thunk(l.thunks(device), name, occurrence);
  EXPECT_GE(i, 0) << name;
  return i >= 0 && l.thunks(device)[static_cast<size_t>(i)].gemm.beside_collective;
}

constexpr const char* kOverlap = R"(
HloModule m, num_partitions=2
ENTRY %main {
  %shard = bf16[64,32]{1,0} parameter(0)
  %x = bf16[16,32]{1,0} parameter(1)
  %w = bf16[32,32]{1,0} parameter(2)
  %ag-start = (bf16[64,32]{1,0}, bf16[128,32]{1,0}) all-gather-start(%shard), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %gemm = bf16[16,32]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %ag-done = bf16[128,32]{1,0} all-gather-done(%ag-start)
  %after = bf16[16,32]{1,0} dot(%gemm, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %out = (bf16[16,32]{1,0}, bf16[128,32]{1,0}) tuple(%after, %ag-done)
})";

TEST(CollectiveOverlap, GemmBetweenAsyncStartAndDoneIsBeside) {
  auto l = lower_text(kOverlap);
  ASSERT_TRUE(l);
  for (size_t d = 0; d < 2; ++d) {
    EXPECT_TRUE(beside(*l, "gemm", 0, d));
    EXPECT_FALSE(beside(*l, "after", 0, d)) << "issued after the done, which waits for the collective";
  }
}

TEST(CollectiveOverlap, CollectiveOnTheGemmsStreamIsOrdered) {
  LowerOptions options;
  options.overrides["ag-start"] = kMainStream;
  auto l = lower_text(kOverlap, options);
  ASSERT_TRUE(l);
  EXPECT_FALSE(beside(*l, "gemm"));
  EXPECT_FALSE(beside(*l, "after"));
}

// The GEMM is issued first, on a compute stream; the collective that follows
// on the main stream does not wait for it.
TEST(CollectiveOverlap, CollectiveIssuedAfterTheGemmIsBeside) {
  constexpr const char* kText = R"(
HloModule m, num_partitions=2
%g {
  %a = bf16[16,32]{1,0} parameter(0)
  %b = bf16[32,32]{1,0} parameter(1)
  ROOT %d = bf16[16,32]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY %main {
  %x = bf16[16,32]{1,0} parameter(0)
  %w = bf16[32,32]{1,0} parameter(1)
  %start = ((bf16[16,32]{1,0}, bf16[32,32]{1,0}), bf16[16,32]{1,0}) async-start(%x, %w), calls=%g, backend_config={"operation_queue_id":"1"}
  %ar = bf16[32,32]{1,0} all-reduce(%w), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%sum
  %done = bf16[16,32]{1,0} async-done(%start)
  %ar2 = bf16[16,32]{1,0} all-reduce(%done), channel_id=2, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%sum
  ROOT %out = (bf16[32,32]{1,0}, bf16[16,32]{1,0}) tuple(%ar, %ar2)
}
%sum {
  %p = bf16[] parameter(0)
  %q = bf16[] parameter(1)
  ROOT %r = bf16[] add(%p, %q)
})";
  auto l = lower_text(kText);
  ASSERT_TRUE(l);
  EXPECT_TRUE(beside(*l, "d")) << "the all-reduce is issued after the GEMM and does not wait for it";
  EXPECT_FALSE(l->thunks()[static_cast<size_t>(find_thunk(l->thunks(), "ar2"))].gemm.beside_collective);
}

TEST(CollectiveOverlap, NoCollectiveMarksNothing) {
  constexpr const char* kText = R"(
HloModule m
ENTRY %main {
  %x = f32[8,8]{1,0} parameter(0)
  ROOT %d = f32[8,8]{1,0} dot(%x, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  auto l = lower_text(kText);
  ASSERT_TRUE(l);
  EXPECT_FALSE(beside(*l, "d"));
}

// Hand-built: the GEMM's stream waits for an event recorded after the
// collective, through a third stream.
Thunk thunk(ThunkKind kind, int stream, int event = -1) {
  Thunk t;
  t.kind = kind;
  t.stream = stream;
  t.event = event;
  return t;
}

TEST(CollectiveOverlap, OrderingThroughAChainOfEvents) {
  std::vector<Thunk> thunks(6);
  thunks[0] = thunk(ThunkKind::kCollective, 100);
  thunks[1] = thunk(ThunkKind::kRecordEvent, 100, 0);
  thunks[2] = thunk(ThunkKind::kWaitEvent, 1, 0);
  thunks[3] = thunk(ThunkKind::kRecordEvent, 1, 1);
  thunks[4] = thunk(ThunkKind::kWaitEvent, 0, 1);
  thunks[5] = thunk(ThunkKind::kGemm, 0);
  mark_gemms_beside_collectives(thunks);
  EXPECT_FALSE(thunks[5].gemm.beside_collective);

  thunks[4] = thunk(ThunkKind::kWaitEvent, 2, 1);  // another stream waits instead
  thunks[5].gemm.beside_collective = false;
  mark_gemms_beside_collectives(thunks);
  EXPECT_TRUE(thunks[5].gemm.beside_collective);
}

}  // namespace
}  // namespace sl::sched
