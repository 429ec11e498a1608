// Busy time, overlap, critical path and kernel statistics on hand-made traces
// with hand-computed answers.

#include <gtest/gtest.h>

#include <cmath>

#include "core/trace/analysis.h"
#include "tests/trace/trace_test_util.h"

namespace sl::trace {
namespace {

using testing::add_event;
using testing::kComm;

Trace overlap_trace() {
  Trace t;
  add_event(t, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 100);
  add_event(t, 0, 0, EventKind::kElementwise, "add", "a0", 110, 150);
  add_event(t, 0, 0, EventKind::kWait, "wait", "ag-done", 150, 160);  // neither compute nor communication
  add_event(t, 0, 1, EventKind::kGemm, "gemm", "g1", 170, 200);
  add_event(t, 0, kComm, EventKind::kCollective, "all-gather", "ag", 50, 130);
  add_event(t, 1, kComm, EventKind::kCollective, "all-gather", "ag", 0, 40);
  add_event(t, 1, 0, EventKind::kGemm, "gemm", "g0", 30, 60);
  add_event(t, 1, 0, EventKind::kCollective, "all-reduce", "ar", 70, 90);  // synchronous, on stream 0
  return t;
}

TEST(AnalysisTest, UnionLengthMergesOverlapsAndIgnoresEmptyIntervals) {
  std::vector<std::pair<int64_t, int64_t>> v = {{10, 20}, {0, 5}, {15, 30}, {40, 40}, {50, 45}, {30, 35}};
  EXPECT_EQ(union_length(v), 5 + 25);
  std::vector<std::pair<int64_t, int64_t>> none;
  EXPECT_EQ(union_length(none), 0);
}

TEST(AnalysisTest, StreamBusyTimeIsUnionPerDeviceAndStream) {
  Trace t = overlap_trace();
  add_event(t, 0, 1, EventKind::kGemm, "gemm", "g2", 180, 210);  // overlaps g1 on the same stream
  auto busy = stream_busy_time(t);
  ASSERT_EQ(busy.size(), 5u);
  EXPECT_EQ(busy[0].device, 0);
  EXPECT_EQ(busy[0].stream, 0);
  EXPECT_EQ(busy[0].busy_ns, 150);
  EXPECT_EQ(busy[0].event_count, 3);
  EXPECT_EQ(busy[1].stream, 1);
  EXPECT_EQ(busy[1].busy_ns, 40);  // [170, 210)
  EXPECT_EQ(busy[2].stream, kComm);
  EXPECT_EQ(busy[2].stream_kind, StreamKind::kCommunication);
  EXPECT_EQ(busy[2].busy_ns, 80);
  EXPECT_EQ(busy[3].device, 1);
  EXPECT_EQ(busy[3].busy_ns, 50);
  EXPECT_EQ(busy[4].busy_ns, 40);
}

TEST(AnalysisTest, DeviceIdleIsTheSpanLessEveryStreamsRecordsTogether) {
  auto idle = device_idle_time(overlap_trace());
  ASSERT_EQ(idle.size(), 2u);
  EXPECT_EQ(idle[0].device, 0);
  EXPECT_EQ(idle[0].span_ns, 200);
  EXPECT_EQ(idle[0].busy_ns, 160 + 30);  // [0,160) across three streams, then [170,200)
  EXPECT_EQ(idle[0].idle_ns(), 10);
  EXPECT_EQ(idle[1].device, 1);
  EXPECT_EQ(idle[1].span_ns, 90);
  EXPECT_EQ(idle[1].idle_ns(), 10);  // [60,70)
  EXPECT_TRUE(device_idle_time(Trace{}).empty());
}

TEST(AnalysisTest, OverlapIsComputeWhileCommunicatingOverCommunication) {
  OverlapReport r = compute_communication_overlap(overlap_trace());
  ASSERT_EQ(r.devices.size(), 2u);
  // Device 0: compute [0,100) [110,150) [170,200) = 170; comm [50,130) = 80;
  // overlap [50,100) + [110,130) = 70.
  EXPECT_EQ(r.devices[0].compute_ns, 170);
  EXPECT_EQ(r.devices[0].communication_ns, 80);
  EXPECT_EQ(r.devices[0].overlap_ns, 70);
  EXPECT_DOUBLE_EQ(r.devices[0].ratio, 70.0 / 80.0);
  // Device 1: compute [30,60); comm [0,40) [70,90) = 60; overlap [30,40) = 10.
  EXPECT_EQ(r.devices[1].compute_ns, 30);
  EXPECT_EQ(r.devices[1].communication_ns, 60);
  EXPECT_EQ(r.devices[1].overlap_ns, 10);
  EXPECT_DOUBLE_EQ(r.devices[1].ratio, 10.0 / 60.0);
  EXPECT_EQ(r.overlap_ns, 80);
  EXPECT_EQ(r.communication_ns, 140);
  EXPECT_DOUBLE_EQ(r.ratio, 80.0 / 140.0);
}

TEST(AnalysisTest, OverlapWithoutCommunicationIsZero) {
  Trace t;
  add_event(t, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 100);
  OverlapReport r = compute_communication_overlap(t);
  EXPECT_EQ(r.communication_ns, 0);
  EXPECT_EQ(r.ratio, 0.0);
}

// A short kernel inside a longer one on another stream must not cut the
// longer one's compute short: device 0 computes over all of [0,1000).
TEST(AnalysisTest, OverlapKeepsComputeThatContainsAShorterKernel) {
  Trace t;
  add_event(t, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 1000);
  add_event(t, 0, 1, EventKind::kElementwise, "add", "a0", 100, 200);
  add_event(t, 0, kComm, EventKind::kCollective, "all-gather", "ag", 300, 800);
  OverlapReport r = compute_communication_overlap(t);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].compute_ns, 1000);
  EXPECT_EQ(r.devices[0].overlap_ns, 500);
  EXPECT_DOUBLE_EQ(r.ratio, 1.0);
}

TEST(AnalysisTest, CriticalPathFollowsLatestEndingPredecessor) {
  Trace t;
  uint32_t early = add_event(t, 0, 1, EventKind::kCopy, "copy", "c0", 0, 4);
  uint32_t a = add_event(t, 0, 0, EventKind::kGemm, "gemm", "a", 0, 10);
  uint32_t b = add_event(t, 0, 0, EventKind::kElementwise, "add", "b", 10, 30);
  uint32_t c = add_event(t, 0, 1, EventKind::kGemm, "gemm", "c", 10, 50);
  uint32_t d = add_event(t, 0, 0, EventKind::kElementwise, "add", "d", 50, 60);
  add_event(t, 1, 0, EventKind::kGemm, "gemm", "other_device", 0, 55);
  t.dependencies.push_back({a, c});  // c waited for a (not for `early`, its stream predecessor)
  t.dependencies.push_back({c, d});  // d waited for c (ends 50, after b at 30)
  CriticalPath p = critical_path(t);
  ASSERT_EQ(p.events, (std::vector<uint32_t>{a, c, d}));
  EXPECT_EQ(p.start_ns, 0);
  EXPECT_EQ(p.end_ns, 60);
  EXPECT_EQ(p.length_ns(), 60);
  EXPECT_EQ(p.busy_ns, 10 + 40 + 10);
  (void)early;
  (void)b;
}

TEST(AnalysisTest, CriticalPathWithoutEdgesFollowsTheStream) {
  Trace t;
  uint32_t x = add_event(t, 0, 0, EventKind::kGemm, "gemm", "x", 0, 10);
  uint32_t y = add_event(t, 0, 0, EventKind::kGemm, "gemm", "y", 20, 30);
  add_event(t, 0, 1, EventKind::kGemm, "gemm", "z", 0, 25);
  CriticalPath p = critical_path(t);
  EXPECT_EQ(p.events, (std::vector<uint32_t>{x, y}));
  EXPECT_EQ(p.busy_ns, 20);
  EXPECT_EQ(p.length_ns(), 30);
  EXPECT_TRUE(critical_path(Trace{}).events.empty());
}

TEST(AnalysisTest, CriticalPathSurvivesCyclicEdges) {
  Trace t;
  uint32_t x = add_event(t, 0, 0, EventKind::kGemm, "gemm", "x", 0, 10);
  uint32_t y = add_event(t, 0, 1, EventKind::kGemm, "gemm", "y", 0, 10);
  t.dependencies.push_back({x, y});
  t.dependencies.push_back({y, x});
  CriticalPath p = critical_path(t);
  EXPECT_EQ(p.events.size(), 2u);
}

TEST(AnalysisTest, KernelStatisticsPerName) {
  Trace t;
  add_event(t, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 100);
  add_event(t, 0, 0, EventKind::kGemm, "gemm", "g1", 100, 130);
  add_event(t, 1, 0, EventKind::kGemm, "gemm", "g0", 0, 30);
  add_event(t, 0, 0, EventKind::kElementwise, "add", "a", 130, 135);
  auto stats = kernel_statistics(t);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].name, "gemm");
  EXPECT_EQ(stats[0].kind, EventKind::kGemm);
  EXPECT_EQ(stats[0].count, 3);
  EXPECT_EQ(stats[0].total_ns, 160);
  EXPECT_EQ(stats[0].min_ns, 30);
  EXPECT_EQ(stats[0].max_ns, 100);
  EXPECT_NEAR(stats[0].mean_ns, 160.0 / 3.0, 1e-9);
  EXPECT_NEAR(stats[0].stddev_ns, std::sqrt(3266.6666666666665 / 3.0), 1e-6);
  EXPECT_EQ(stats[1].name, "add");
  EXPECT_EQ(stats[1].stddev_ns, 0.0);
}

}  // namespace
}  // namespace sl::trace
