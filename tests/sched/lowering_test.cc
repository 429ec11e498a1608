// Lowering (docs/streams.md): thunk order for async work, unrolling,
// collectives per device, GEMM dims, and linear time.

#include <gtest/gtest.h>

#include <ctime>

#include "core/sched/gemm.h"
#include "tests/sched/sched_test_util.h"

namespace sl::sched {
namespace {

using testing::find_thunk;
using testing::lower_text;
using testing::signature;
using Sig = std::vector<std::string>;

std::vector<int64_t> ids(std::span<const int64_t> group) { return {group.begin(), group.end()}; }

TEST(Lowering, TwoAsyncOpsOnOneStreamHaveNoFalseDependency) {
  auto l = lower_text(R"(
HloModule two_async
neg {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
}
expo {
  p = f32[8] parameter(0)
  ROOT x = f32[8] exponential(p)
}
ENTRY e {
  x = f32[8] parameter(0)
  s1 = ((f32[8]), f32[8], s32[]) async-start(x), calls=neg, frontend_attributes={_xla_stream_annotation="1"}
  s2 = ((f32[8]), f32[8], s32[]) async-start(x), calls=expo, frontend_attributes={_xla_stream_annotation="1"}
  d2 = f32[8] async-done(s2)
  c = f32[8] add(d2, d2)
  d1 = f32[8] async-done(s1)
  ROOT r = f32[8] add(c, d1)
}
)");
  ASSERT_TRUE(l);
  // Both annotated onto stream 1 (unannotated, XLA's round robin would split them).
  // d2 waits on the event recorded right after s2's own work (e3), not on
  // "everything on stream 1", so c does not wait for s1's work.
  EXPECT_EQ(signature(l->thunks()),
            (Sig{"rec s0 e0", "wait s1 e0", "s1 n", "rec s1 e1", "rec s0 e2", "wait s1 e2", "s1 x", "rec s1 e3",
                 "wait s0 e3", "s0 c", "wait s0 e1", "s0 r"}));
  EXPECT_EQ(l->device().num_events, 4);
  const auto& thunks = l->thunks();
  EXPECT_EQ(thunks[find_thunk(thunks, "n")].attributed_name, "s1");
  EXPECT_EQ(thunks[find_thunk(thunks, "x", 0)].attributed_name, "s2");
}

TEST(Lowering, OccurrencesCountPerAttribution) {
  auto l = lower_text(R"(
HloModule shared_callee
neg {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
}
ENTRY e {
  x = f32[8] parameter(0)
  s1 = ((f32[8]), f32[8], s32[]) async-start(x), calls=neg
  d1 = f32[8] async-done(s1)
  s2 = ((f32[8]), f32[8], s32[]) async-start(d1), calls=neg
  d2 = f32[8] async-done(s2)
  c1 = f32[8] call(d2), to_apply=neg
  ROOT c2 = f32[8] call(c1), to_apply=neg
}
)");
  ASSERT_TRUE(l);
  std::vector<std::pair<std::string, int>> seen;
  for (const Thunk& t : l->thunks()) {
    if (t.instruction) seen.emplace_back(t.attributed_name, t.occurrence);
  }
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, int>>{{"s1", 0}, {"s2", 0}, {"n", 0}, {"n", 1}}));
}

TEST(Lowering, CollectivesPerDeviceShareRendezvousIds) {
  auto l = lower_text(R"(
HloModule coll, replica_count=2, num_partitions=2
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = bf16[2] parameter(1)
  ag = (f32[8], bf16[4]) all-gather(x, y), replica_groups={{1,0}}, dimensions={0}
  ar = f32[4] all-reduce(x), channel_id=1, replica_groups={{3,0},{1,2}}, use_global_device_ids=true, to_apply=sum
  cp = f32[4] collective-permute(x), channel_id=2, source_target_pairs={{0,1}}
  ROOT t = (f32[8], bf16[4], f32[4], f32[4]) tuple(ag, ar, cp)
}
)");
  ASSERT_TRUE(l);
  ASSERT_EQ(l->program.devices.size(), 4u);
  for (int64_t d = 0; d < 4; ++d) {
    const auto& thunks = l->thunks(static_cast<size_t>(d));
    ASSERT_EQ(thunks.size(), 3u);
    const CollectiveInfo& ag = thunks[0].collective;
    EXPECT_EQ(ag.bytes_in, 4 * 4 + 2 * 2);  // summed over the tuple operands
    EXPECT_EQ(ag.bytes_out, 2 * (4 * 4 + 2 * 2));
    EXPECT_EQ(thunks[0].operands.size(), 2u);
    EXPECT_EQ(thunks[0].results.size(), 2u);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(thunks[k].collective.rendezvous_id, k);
    // Cross-replica {1,0}: replica 1 then replica 0 of this device's partition.
    const int64_t partition = d % 2;
    EXPECT_EQ(ids(ag.group), (std::vector<int64_t>{2 + partition, partition}));
    EXPECT_EQ(ag.rank_in_group, d < 2 ? 1 : 0);
    // Flattened ids are device ids.
    const CollectiveInfo& ar = thunks[1].collective;
    EXPECT_EQ(ids(ar.group), (d == 0 || d == 3) ? (std::vector<int64_t>{3, 0}) : (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(ar.rank_in_group, (d == 3 || d == 1) ? 0 : 1);
    // channel_id on collective-permute: cross-partition, pairs within a replica.
    const CollectiveInfo& cp = thunks[2].collective;
    const int64_t replica = d / 2;
    EXPECT_EQ(cp.send_to, partition == 0 ? replica * 2 + 1 : -1);
    EXPECT_EQ(cp.recv_from, partition == 1 ? replica * 2 : -1);
  }
}

TEST(Lowering, DeviceOutsideEveryGroupIsAnError) {
  auto parsed = hlo::parse_program(R"(
HloModule partial, replica_count=4
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=sum
}
)",
                                   "p.hlo");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
  auto lowered = lower(*parsed, {});
  ASSERT_FALSE(lowered.is_ok());
  EXPECT_NE(lowered.status().message().find("no replica group"), std::string::npos);
  LowerOptions two;
  two.replica_count = 2;
  EXPECT_TRUE(lower(*parsed, two).is_ok());
}

// An in-place permute of two slices names devices 0 and 2 twice as sources
// (hlo_parser_test's CollectivePermuteInPlaceUpdateMultipleReadWrite, which
// XLA accepts): each such device sends to two peers; send_to is the first.
TEST(Lowering, InPlacePermuteOfTwoSlicesSendsToTwoPeers) {
  auto l = lower_text(R"(
HloModule two_slices, replica_count=4
ENTRY e {
  z = s32[] constant(0)
  one = s32[] constant(1)
  at0 = (s32[], s32[], s32[]) tuple(z, z, z)
  at1 = (s32[], s32[], s32[]) tuple(one, z, z)
  offsets = ((s32[], s32[], s32[]), (s32[], s32[], s32[])) tuple(at0, at1)
  input = f32[8,8,128] parameter(0)
  c = f32[] constant(1)
  output = f32[8,8,128] broadcast(c), dimensions={}
  ROOT root = f32[8,8,128] collective-permute(input, output, offsets, offsets), source_target_pairs={{0,1},{1,2},{2,3},{0,3},{2,1},{3,2}}, slice_sizes={{1,8,128},{1,8,128}}
}
)");
  ASSERT_TRUE(l);
  ASSERT_EQ(l->program.devices.size(), 4u);
  const std::vector<int64_t> first_send = {1, 2, 3, 2}, first_recv = {-1, 0, 1, 2};
  for (size_t d = 0; d < 4; ++d) {
    const int cp = find_thunk(l->thunks(d), "root");
    ASSERT_GE(cp, 0);
    EXPECT_EQ(l->thunks(d)[static_cast<size_t>(cp)].collective.send_to, first_send[d]) << "device " << d;
    EXPECT_EQ(l->thunks(d)[static_cast<size_t>(cp)].collective.recv_from, first_recv[d]) << "device " << d;
  }
}

TEST(Lowering, CollectivePermutePeersAndRendezvousAcrossOccurrences) {
  auto l = lower_text(R"(
HloModule perm, num_partitions=3
body {
  p = f32[4] parameter(0)
  ROOT cp = f32[4] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,2}}
}
ENTRY e {
  x = f32[4] parameter(0)
  c1 = f32[4] call(x), to_apply=body
  ROOT c2 = f32[4] call(c1), to_apply=body
}
)");
  ASSERT_TRUE(l);
  const int64_t send[] = {1, 2, -1};
  const int64_t recv[] = {-1, 0, 1};
  for (size_t d = 0; d < 3; ++d) {
    const auto& thunks = l->thunks(d);
    ASSERT_EQ(thunks.size(), 2u);
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(thunks[k].occurrence, k);
      EXPECT_EQ(thunks[k].collective.rendezvous_id, k);
      EXPECT_EQ(thunks[k].collective.send_to, send[d]);
      EXPECT_EQ(thunks[k].collective.recv_from, recv[d]);
      EXPECT_EQ(ids(thunks[k].collective.group), (std::vector<int64_t>{0, 1, 2}));
    }
  }
}

// An f32 GEMM carries XLA's TF32 choice (dot_precision.h) so the simulator
// costs it as the cuda backend runs it; bf16 and HIGHEST f32 do not.
TEST(Lowering, GemmsCarryXlasTf32Choice) {
  auto l = lower_text(R"(
HloModule gemms
ENTRY e {
  a = f32[32,64] parameter(0)
  b = f32[64,16] parameter(1)
  fast = f32[32,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  exact = f32[32,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
  c = bf16[32,64] parameter(2)
  d = bf16[64,16] parameter(3)
  half = bf16[32,16] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[32,16], f32[32,16], bf16[32,16]) tuple(fast, exact, half)
}
)");
  ASSERT_TRUE(l);
  const auto& thunks = l->thunks();
  EXPECT_TRUE(thunks[find_thunk(thunks, "fast")].gemm.tf32);
  EXPECT_FALSE(thunks[find_thunk(thunks, "exact")].gemm.tf32);
  EXPECT_FALSE(thunks[find_thunk(thunks, "half")].gemm.tf32);
}

TEST(Lowering, GemmDimsAndFlops) {
  auto l = lower_text(R"(
HloModule gemms
ENTRY e {
  a = bf16[4,32,64] parameter(0)
  b = bf16[4,64,16] parameter(1)
  d = bf16[4,32,16] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  l = f32[128,256] parameter(2)
  r = f32[512,256] parameter(3)
  cc = (f32[128,512], s8[4096]) custom-call(l, r), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["1"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]}}}
  ROOT t = (bf16[4,32,16], (f32[128,512], s8[4096])) tuple(d, cc)
}
)");
  ASSERT_TRUE(l);
  const auto& thunks = l->thunks();
  const Thunk& dot = thunks[find_thunk(thunks, "d")];
  EXPECT_EQ(dot.kind, ThunkKind::kGemm);
  EXPECT_EQ(dot.gemm.m, 32);
  EXPECT_EQ(dot.gemm.n, 16);
  EXPECT_EQ(dot.gemm.k, 64);
  EXPECT_EQ(dot.gemm.batch, 4);
  EXPECT_EQ(dot.gemm.type, hlo::PrimitiveType::kBF16);
  EXPECT_EQ(dot.flops, 2 * 32 * 16 * 64 * 4);
  EXPECT_EQ(dot.workspace.size, kDefaultGemmWorkspaceBytes);

  const Thunk& cc = thunks[find_thunk(thunks, "cc")];
  EXPECT_EQ(cc.kind, ThunkKind::kGemm);
  EXPECT_EQ(cc.gemm.m, 128);
  EXPECT_EQ(cc.gemm.n, 512);
  EXPECT_EQ(cc.gemm.k, 256);
  EXPECT_EQ(cc.gemm.batch, 1);
  EXPECT_EQ(cc.flops, int64_t{2} * 128 * 512 * 256);
  // The s8 output is the workspace, not a result.
  EXPECT_EQ(cc.workspace.size, 4096);
  ASSERT_EQ(cc.results.size(), 1u);
  EXPECT_EQ(cc.results[0].size, 128 * 512 * 4);
}

TEST(Lowering, KernelsCountBytesAndLinearTime) {
  // 100,000 dependent instructions lower in linear time.
  std::string text = "HloModule big\nENTRY e {\n  v0 = f32[16] parameter(0)\n";
  constexpr int kCount = 100000;
  for (int i = 1; i < kCount; ++i) text += "  v" + std::to_string(i) + " = f32[16] negate(v" + std::to_string(i - 1) + ")\n";
  text += "  ROOT r = f32[16] add(v" + std::to_string(kCount - 1) + ", v0)\n}\n";
  auto parsed = hlo::parse_program(text, "big.hlo");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
  const std::clock_t begin = std::clock();  // CPU time: the test machine is shared
  auto lowered = lower(*parsed, {});
  const double seconds = static_cast<double>(std::clock() - begin) / CLOCKS_PER_SEC;
  ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
  ASSERT_EQ(lowered->devices[0].thunks.size(), static_cast<size_t>(kCount));
  EXPECT_EQ(lowered->devices[0].thunks[5].bytes_accessed, 128);
  EXPECT_EQ(lowered->devices[0].thunks[5].flops, 16);
  // Three buffers live at most at once: parameter, one input and one output.
  EXPECT_EQ(lowered->buffers.peak_bytes, 3 * 64);
  // Generous for sanitizer builds; release builds take well under a second.
  EXPECT_LT(seconds, 10.0);
  RecordProperty("lower_seconds", std::to_string(seconds));
}

// A slice reads the window it returns, not its whole operand (a 64 MiB
// row window of a 128 MiB tensor moves 128 MiB, not 192).
TEST(Lowering, SlicesCountTheirWindowNotTheirOperand) {
  auto l = lower_text(R"(
HloModule m
ENTRY e {
  x = f32[64,16] parameter(0)
  i = s32[] parameter(1)
  lo = f32[16,16] slice(x), slice={[0:16], [0:16]}
  win = f32[8,16] dynamic-slice(x, i, i), dynamic_slice_sizes={8,16}
  ROOT t = (f32[16,16], f32[8,16]) tuple(lo, win)
})");
  ASSERT_TRUE(l);
  const auto& thunks = l->thunks();
  EXPECT_EQ(thunks[find_thunk(thunks, "lo")].bytes_accessed, 2 * 16 * 16 * 4);
  EXPECT_EQ(thunks[find_thunk(thunks, "win")].bytes_accessed, 2 * 8 * 16 * 4 + 2 * 4);  // window twice, two indices
}

TEST(Lowering, FormatListsThunksStreamsAndPeak) {
  auto l = lower_text(R"(
HloModule fmt
ENTRY e {
  x = f32[8] parameter(0)
  a = f32[8] negate(x), backend_config={"operation_queue_id":"1"}
  ROOT b = f32[8] add(a, x)
}
)");
  ASSERT_TRUE(l);
  std::string text = format_lowered(l->program);
  EXPECT_NE(text.find("device 0"), std::string::npos) << text;
  EXPECT_NE(text.find("record event e0"), std::string::npos) << text;
  EXPECT_NE(text.find("wait for event e1"), std::string::npos) << text;
  EXPECT_NE(text.find("peak 96 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("s1"), std::string::npos) << text;
}

}  // namespace
}  // namespace sl::sched
