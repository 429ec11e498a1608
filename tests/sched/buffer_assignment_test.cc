// Buffer assignment (docs/streams.md): the interval allocator, live ranges
// across async regions, GEMM workspaces, and hand-computed peaks.

#include <gtest/gtest.h>

#include "core/sched/gemm.h"
#include "tests/sched/sched_test_util.h"

namespace sl::sched {
namespace {

using testing::find_thunk;
using testing::lower_text;
using testing::overlaps;

TEST(AllocateIntervals, OverlappingIntervalsGetDisjointAlignedSlices) {
  std::vector<LiveInterval> intervals = {{100, 0, 2}, {300, 1, 3}, {50, 2, 2}, {10, 4, 5}, {0, 0, 5}};
  IntervalAllocation a = allocate_intervals(intervals);
  ASSERT_EQ(a.offsets.size(), intervals.size());
  EXPECT_EQ(a.offsets[4], -1);  // zero-sized: no memory
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a.offsets[i] % kBufferAlignment, 0);
    for (size_t j = i + 1; j < 4; ++j) {
      const bool live_together = intervals[i].start <= intervals[j].end && intervals[j].start <= intervals[i].end;
      if (!live_together) continue;
      EXPECT_FALSE(overlaps({a.offsets[i], intervals[i].size}, {a.offsets[j], intervals[j].size})) << i << " " << j;
    }
  }
  // At position 2: 100 + 300 + 50 live.
  EXPECT_EQ(a.peak_bytes, 450);
  // 256 + 512 + 256 aligned bytes at position 2.
  EXPECT_EQ(a.arena_bytes, 1024);
  // The last interval starts after all others ended: it reuses offset 0.
  EXPECT_EQ(a.offsets[3], 0);
}

TEST(AllocateIntervals, BestFitReusesTheSmallestGap) {
  // At position 1 two gaps open: 512 bytes at 0 and 256 bytes at 768.
  std::vector<LiveInterval> intervals = {{512, 0, 0}, {256, 0, 5}, {256, 0, 0}, {256, 0, 5}, {200, 1, 1}};
  IntervalAllocation a = allocate_intervals(intervals);
  EXPECT_EQ(a.offsets[0], 0);
  EXPECT_EQ(a.offsets[1], 512);
  EXPECT_EQ(a.offsets[2], 768);
  EXPECT_EQ(a.offsets[3], 1024);
  EXPECT_EQ(a.offsets[4], 768);
  EXPECT_EQ(a.arena_bytes, 1280);
}

TEST(BufferAssignment, HandComputedPeakAndSequentialReuse) {
  auto l = lower_text(R"(
HloModule chain
ENTRY e {
  p = f32[16] parameter(0)
  a = f32[16] negate(p)
  b = f32[16] exponential(a)
  ROOT c = f32[16] add(b, p)
}
)");
  ASSERT_TRUE(l);
  const auto& thunks = l->thunks();
  ASSERT_EQ(thunks.size(), 3u);
  const BufferAssignment& buffers = l->program.buffers;
  // p lives throughout; at positions 1 and 2 three 64-byte values are live.
  EXPECT_EQ(buffers.peak_bytes, 192);
  // a dies at position 1, so c (position 2) takes its place.
  EXPECT_EQ(thunks[2].results[0].offset, thunks[0].results[0].offset);
  EXPECT_NE(thunks[1].results[0].offset, thunks[0].results[0].offset);
  EXPECT_EQ(buffers.arena_bytes, 3 * 256);
  ASSERT_EQ(buffers.parameters.size(), 1u);
  ASSERT_EQ(buffers.parameters[0].size(), 1u);
  EXPECT_EQ(buffers.parameters[0][0].size, 64);
  EXPECT_EQ(thunks[0].operands[0].offset, buffers.parameters[0][0].offset);
  ASSERT_EQ(buffers.outputs.size(), 1u);
  EXPECT_EQ(buffers.outputs[0].offset, thunks[2].results[0].offset);
}

TEST(BufferAssignment, ConcurrentGemmsOnTwoStreamsNeverShare) {
  auto l = lower_text(R"(
HloModule concurrent
ENTRY e {
  x = f32[64,64] parameter(0)
  g1 = f32[64,64] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}, backend_config={"operation_queue_id":"1"}
  g2 = f32[64,64] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}, backend_config={"operation_queue_id":"2"}
  ROOT t = (f32[64,64], f32[64,64]) tuple(g1, g2)
}
)");
  ASSERT_TRUE(l);
  const auto& thunks = l->thunks();
  const Thunk& g1 = thunks[find_thunk(thunks, "g1")];
  const Thunk& g2 = thunks[find_thunk(thunks, "g2")];
  EXPECT_EQ(g1.stream, 1);
  EXPECT_EQ(g2.stream, 2);
  EXPECT_FALSE(overlaps(g1.workspace, g2.workspace));
  EXPECT_FALSE(overlaps(g1.results[0], g2.results[0]));
  EXPECT_FALSE(overlaps(g1.workspace, g2.results[0]));
  EXPECT_FALSE(overlaps(g2.workspace, g1.results[0]));
  // x + two outputs + two workspaces.
  EXPECT_EQ(l->program.buffers.peak_bytes, 3 * 16384 + 2 * kDefaultGemmWorkspaceBytes);
}

TEST(BufferAssignment, AsyncGemmOverlapsLaterMainStreamGemm) {
  // g1 runs on stream 1 until its done at the very end; g2 on the main
  // stream comes later in the flattened order but runs concurrently.
  auto l = lower_text(R"(
HloModule region
ENTRY e {
  x = f32[64,64] parameter(0)
  g1 = f32[64,64] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}, backend_config={"operation_queue_id":"1"}
  n = f32[64,64] negate(x)
  g2 = f32[64,64] dot(n, n), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  m = f32[64,64] negate(g2)
  ROOT r = f32[64,64] add(g1, m)
}
)");
  ASSERT_TRUE(l);
  const auto& thunks = l->thunks();
  const Thunk& g1 = thunks[find_thunk(thunks, "g1")];
  const Thunk& g2 = thunks[find_thunk(thunks, "g2")];
  const Thunk& n = thunks[find_thunk(thunks, "n")];
  EXPECT_FALSE(overlaps(g1.workspace, g2.workspace));
  EXPECT_FALSE(overlaps(g1.results[0], g2.workspace));
  EXPECT_FALSE(overlaps(g1.workspace, n.results[0]));
  EXPECT_FALSE(overlaps(g1.workspace, g2.results[0]));
}

TEST(BufferAssignment, SequentialGemmsMayShareWorkspace) {
  auto l = lower_text(R"(
HloModule sequential
ENTRY e {
  x = f32[64,64] parameter(0)
  g1 = f32[64,64] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g2 = f32[64,64] dot(g1, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT m = f32[64,64] negate(g2)
}
)");
  ASSERT_TRUE(l);
  const auto& thunks = l->thunks();
  const Thunk& g1 = thunks[find_thunk(thunks, "g1")];
  const Thunk& g2 = thunks[find_thunk(thunks, "g2")];
  EXPECT_EQ(g1.workspace.offset, g2.workspace.offset);
  EXPECT_EQ(g1.workspace.size, kDefaultGemmWorkspaceBytes);
  // Peak at g2: x + g1 + g2 + one workspace (g1's is dead by then).
  EXPECT_EQ(l->program.buffers.peak_bytes, 3 * 16384 + kDefaultGemmWorkspaceBytes);
}

TEST(BufferAssignment, OperandsOfAsyncWorkLiveUntilTheDone) {
  // x2 is read only by the async negate, yet must survive until its done:
  // y (main stream, after the start) must not reuse its memory.
  auto l = lower_text(R"(
HloModule hold
ENTRY e {
  x = f32[16] parameter(0)
  x2 = f32[16] exponential(x)
  a = f32[16] negate(x2), backend_config={"operation_queue_id":"1"}
  y = f32[16] add(x, x)
  z = f32[16] multiply(y, y)
  ROOT r = f32[16] add(a, z)
}
)");
  ASSERT_TRUE(l);
  const auto& thunks = l->thunks();
  const Thunk& x2 = thunks[find_thunk(thunks, "x2")];
  const Thunk& y = thunks[find_thunk(thunks, "y")];
  const Thunk& z = thunks[find_thunk(thunks, "z")];
  EXPECT_FALSE(overlaps(x2.results[0], y.results[0]));
  EXPECT_FALSE(overlaps(x2.results[0], z.results[0]));
}

TEST(BufferAssignment, ConstantsAndTupleParametersGetSlices) {
  auto l = lower_text(R"(
HloModule consts
ENTRY e {
  p = (f32[4], (s32[2], bf16[8])) parameter(0)
  k = f32[4] constant({1, 2, 3, 4})
  v = f32[4] get-tuple-element(p), index=0
  ROOT s = f32[4] add(v, k)
}
)");
  ASSERT_TRUE(l);
  const BufferAssignment& buffers = l->program.buffers;
  ASSERT_EQ(buffers.parameters.size(), 1u);
  ASSERT_EQ(buffers.parameters[0].size(), 3u);
  EXPECT_EQ(buffers.parameters[0][1].size, 8);
  EXPECT_EQ(buffers.parameters[0][2].size, 16);
  ASSERT_EQ(buffers.constants.size(), 1u);
  EXPECT_EQ(buffers.constants[0].instruction->name, "k");
  const Thunk& s = l->thunks()[0];
  EXPECT_EQ(s.operands[0].offset, buffers.parameters[0][0].offset);
  EXPECT_EQ(s.operands[1].offset, buffers.constants[0].slice.offset);
  EXPECT_EQ(buffers.peak_bytes, 16 + 8 + 16 + 16 + 16);
}

}  // namespace
}  // namespace sl::sched
