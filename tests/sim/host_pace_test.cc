// Host costs from a measured run (sim/host_pace.h): hand-built steps whose
// launch-bound records show the host's pace, records hidden behind the GPU
// that do not, and the fallback to the device file's values.

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <unordered_set>

#include "sim/host_pace.h"

namespace sl::sim {
namespace {

constexpr int64_t kUs = 1000;

struct StepBuilder {
  trace::Trace trace;
  void add(int64_t start_us10, int64_t end_us10, const std::string& instruction,
           trace::EventKind kind = trace::EventKind::kOther, int32_t stream = 1, int32_t step = 0) {
    trace::Event e;
    e.stream = stream;
    e.kind = kind;
    e.instruction = trace.strings.intern(instruction);
    e.name = e.instruction;
    e.start_ns = start_us10 * kUs / 10;  // tenths of a us, to write 40.5 us as 405
    e.end_ns = end_us10 * kUs / 10;
    e.iteration = step;
    trace.events.push_back(e);
  }
};

// "first", then three times a kernel 10 us after the last issue and
// `second` (a record named by `name(i)`, of `kind`) `after_us10` tenths of a
// us later; returns the time of the last issue, in tenths of a us.
int64_t kernels_then(StepBuilder& b, int64_t after_us10, const std::function<std::string(int)>& name,
                     trace::EventKind kind, bool two_records) {
  int64_t t = 0;
  b.add(t, t + 20, "first");
  for (int i = 0; i < 3; ++i) {
    t += 100;
    b.add(t, t + 20, "k" + std::to_string(i));
    t += after_us10;
    b.add(t, t + 30, name(i), kind);
    if (two_records) b.add(t + 30, t + 50, name(i), kind);
  }
  return t;
}

DeviceModel file_model() {
  DeviceModel m;
  m.host_kernel_launch_us = 9.0;
  m.host_library_call_us = 21.5;
  m.host_graph_launch_us = 9.0;
  return m;
}

TEST(HostPace, LaunchBoundKernelsGiveTheHostsPace) {
  // The host issues a kernel every 10 us; each runs 2 us, so each starts at its issue.
  StepBuilder b;
  for (int i = 0; i < 6; ++i) b.add(100 * i, 100 * i + 20, "k" + std::to_string(i));
  const HostCostEstimate e = estimate_host_costs(b.trace, {}, file_model());
  // The first record is not known to be launch-bound, the second is the first anchor.
  EXPECT_EQ(e.kernel_samples, 4);
  EXPECT_NEAR(e.kernel_launch_us, 10.0, 1e-9);
  EXPECT_NEAR(with_host_costs(file_model(), e).host_kernel_launch_us, 10.0, 1e-9);
}

TEST(HostPace, HiddenKernelsCountInTheIntervalButAreNoAnchors) {
  // Host pace 10 us: k1 runs 30 us, k2..k4 queue behind it (started at their
  // stream's end, not at their issue), k5 is issued at 50 us on an idle GPU.
  StepBuilder b;
  b.add(0, 20, "k0");
  b.add(100, 400, "k1");
  b.add(405, 430, "k2");
  b.add(435, 450, "k3");
  b.add(455, 465, "k4");
  b.add(500, 510, "k5");
  const HostCostEstimate e = estimate_host_costs(b.trace, {}, file_model());
  EXPECT_EQ(e.kernel_samples, 4);  // k2, k3, k4, k5 between the anchors k1 and k5
  EXPECT_NEAR(e.kernel_launch_us, 10.0, 1e-9);
}

TEST(HostPace, TooFewLaunchBoundKernelsKeepTheDeviceFile) {
  // One long kernel and kernels queued right behind each other: the GPU
  // held every one back, none shows the host.
  StepBuilder b;
  b.add(0, 1000, "long");
  for (int i = 0; i < 5; ++i) b.add(1005 + 30 * i, 1030 + 30 * i, "q" + std::to_string(i));
  const HostCostEstimate e = estimate_host_costs(b.trace, {}, file_model());
  EXPECT_LT(e.kernel_samples, kMinHostSamples);
  const DeviceModel used = with_host_costs(file_model(), e);
  EXPECT_DOUBLE_EQ(used.host_kernel_launch_us, 9.0);
  EXPECT_DOUBLE_EQ(used.host_library_call_us, 21.5);
  EXPECT_DOUBLE_EQ(used.host_graph_launch_us, 9.0);
  EXPECT_NE(host_costs_line(e, file_model()).find("kernel 9.0 us (device file"), std::string::npos);
}

TEST(HostPace, AWaitOnAnotherStreamIsNoAnchor) {
  // s2's kernel starts right at the end of s1's (an event wait): not the host's pace.
  StepBuilder b;
  for (int i = 0; i < 4; ++i) b.add(100 * i, 100 * i + 20, "k" + std::to_string(i));
  b.add(400, 900, "long", trace::EventKind::kOther, 1);
  b.add(905, 915, "waiter", trace::EventKind::kOther, 2);
  const HostCostEstimate e = estimate_host_costs(b.trace, {}, file_model());
  // k1..k3 and `long` are anchors 10 us apart; `waiter` is not an anchor.
  EXPECT_EQ(e.kernel_samples, 3);
  EXPECT_NEAR(e.kernel_launch_us, 10.0, 1e-9);
}

TEST(HostPace, LibraryCallsWithTheKernelsCostTakenOff) {
  // Kernel every 10 us, then a cuBLAS call (a GEMM record of a custom-call,
  // two kernels issued once) that the host takes 25 us for, three times.
  StepBuilder b;
  int64_t t = kernels_then(b, 250, [](int i) { return "custom-call." + std::to_string(i); }, trace::EventKind::kGemm,
                           true);
  t += 100;
  b.add(t, t + 20, "last");
  const HostCostEstimate e = estimate_host_costs(b.trace, {}, file_model());
  EXPECT_NEAR(e.kernel_launch_us, 10.0, 1e-9);
  EXPECT_EQ(e.library_samples, 3);
  EXPECT_NEAR(e.library_call_us, 25.0, 1e-9);
}

TEST(HostPace, AGraphsLaterNodesAreNotTheHosts) {
  // Four graphs of three nodes back to back inside each, launched 12 us
  // apart on an idle GPU: the first is the first anchor.
  StepBuilder b;
  b.add(0, 10, "k0");
  const std::unordered_set<std::string> in_graph = {"n0", "n1", "n2"};
  for (int g = 0; g < 4; ++g) {
    const int64_t t = 100 + 120 * g;
    b.add(t, t + 20, "n0");
    b.add(t + 19, t + 40, "n1");
    b.add(t + 39, t + 60, "n2");
  }
  const HostCostEstimate e = estimate_host_costs(b.trace, in_graph, file_model());
  EXPECT_EQ(e.graph_samples, 3);
  EXPECT_NEAR(e.graph_launch_us, 12.0, 1e-9);
  EXPECT_EQ(e.kernel_samples, 0);
}

TEST(HostPace, DynamicSlicesAfterKernelsAndARecordedAgainGraphLessItsRecording) {
  // Kernels every 10 us; three dynamic-slice fusions the host takes 18 us
  // for; then four graphs XLA records again (4 commands at the device
  // file's 1.5 us) launched 20 us apart: 14 us a launch is left.
  StepBuilder b;
  int64_t t = kernels_then(b, 180, [](int) { return std::string("slice"); }, trace::EventKind::kOther, false);
  HostWorkOf work;
  work.dynamic_slice = {"slice"};
  work.rerecorded_commands = {{"n0", 4}, {"n1", 4}};
  for (int g = 0; g < 4; ++g) {
    t += 200;
    b.add(t, t + 20, "n0");
    b.add(t + 19, t + 40, "n1");
  }
  DeviceModel m = file_model();
  m.host_dynamic_slice_us = 20;
  m.host_graph_rerecord_us = 1.5;
  const HostCostEstimate e = estimate_host_costs(b.trace, {"n0", "n1"}, m, work);
  EXPECT_NEAR(e.kernel_launch_us, 10.0, 1e-9);
  EXPECT_EQ(e.dynamic_slice_samples, 3);
  EXPECT_NEAR(e.dynamic_slice_us, 18.0, 1e-9);
  EXPECT_EQ(e.graph_samples, 4);
  EXPECT_NEAR(e.graph_launch_us, 14.0, 1e-9);
  EXPECT_NE(host_costs_line(e, m).find("dynamic slice 18.0 us (3 launch-bound)"), std::string::npos)
      << host_costs_line(e, m);
}

// Four graphs of 4 commands XLA records again, 1 a cuBLAS call it traces
// again, launched 20 us apart with no other graph to tell a launch: the launch
// is the device file's 9 us at the host's pace, the retrace what is left,
// 20 - (9 + 3 x 1.5) x pace. The pace: the kernels' five intervals (38 us,
// 45 by the file) and the graphs' four (80 us, 4 x 19 by the file), 118/121.
HostCostEstimate retraced_graphs_then(int plain_graphs, int64_t plain_apart) {
  StepBuilder b;
  int64_t t = kernels_then(b, 60, [](int i) { return "x" + std::to_string(i); }, trace::EventKind::kOther, false);
  HostWorkOf work;
  work.rerecorded_commands = {{"n0", 4}, {"n1", 4}};
  work.retraced_commands = {{"n0", 1}, {"n1", 1}};
  for (int g = 0; g < 4; ++g) {
    t += 200;
    b.add(t, t + 20, "n0");
    b.add(t + 19, t + 40, "n1");
  }
  for (int g = 0; g < plain_graphs; ++g) {
    t += plain_apart;
    b.add(t, t + 20, "m0");
    b.add(t + 19, t + 40, "m1");
  }
  DeviceModel m = file_model();
  m.host_graph_rerecord_us = 1.5;
  m.host_graph_retrace_us = 5.5;
  return estimate_host_costs(b.trace, {"n0", "n1", "m0", "m1"}, m, work);
}

TEST(HostPace, GraphsThatTraceACublasCallAgainGiveItsRetraceNotTheLaunch) {
  const HostCostEstimate e = retraced_graphs_then(0, 0);
  EXPECT_EQ(e.graph_samples, 0) << "no graph without a retrace";
  EXPECT_EQ(e.graph_retrace_samples, 4);
  EXPECT_EQ(e.pace_samples, 9);
  const double pace = 118.0 / 121.0;
  EXPECT_NEAR(e.pace, pace, 1e-9);
  EXPECT_NEAR(e.graph_retrace_us, 20 - (9 + 3 * 1.5) * pace, 1e-9);
  const DeviceModel used = with_host_costs(file_model(), e);
  EXPECT_NEAR(used.host_graph_launch_us, 9.0 * pace, 1e-9);
  EXPECT_NEAR(used.host_graph_retrace_us, 20 - (9 + 3 * 1.5) * pace, 1e-9);
}

// With four plain graphs launched 12 us apart after them, the launch is
// theirs, 12 us, and the retrace 20 - 12 - 4.5 = 3.5 us: the retracing
// graphs' cost does not reach the plain ones.
TEST(HostPace, PlainGraphsGiveTheLaunchTheOthersTheRetrace) {
  const HostCostEstimate e = retraced_graphs_then(4, 120);
  EXPECT_EQ(e.graph_samples, 4);
  EXPECT_NEAR(e.graph_launch_us, 12.0, 1e-9);
  EXPECT_EQ(e.graph_retrace_samples, 4);
  EXPECT_NEAR(e.graph_retrace_us, 3.5, 1e-9);
}

// Graphs of two cuBLAS commands each (a notriton loop body), four launched
// `apart` (in 0.1 us) after `plain` graphs without one launched 12 us apart.
HostCostEstimate blas_graphs_after(int plain, int64_t apart) {
  StepBuilder b;
  int64_t t = kernels_then(b, 60, [](int i) { return "x" + std::to_string(i); }, trace::EventKind::kOther, false);
  for (int g = 0; g < plain; ++g) {
    t += 120;
    b.add(t, t + 20, "m0");
    b.add(t + 19, t + 40, "m1");
  }
  for (int g = 0; g < 4; ++g) {
    t += apart;
    b.add(t, t + 20, "b0");
    b.add(t + 19, t + 40, "b1");
  }
  HostWorkOf work;
  work.blas_commands = {{"b0", 2}, {"b1", 2}};
  return estimate_host_costs(b.trace, {"m0", "m1", "b0", "b1"}, file_model(), work);
}

// Launches 12 us from the plain graphs; 18 us for a graph of two commands:
// 3 us a command, which the plain graphs then do not pay.
TEST(HostPace, AGraphsCublasCommandsCostApartFromItsLaunch) {
  const HostCostEstimate e = blas_graphs_after(4, 180);
  EXPECT_EQ(e.graph_samples, 4);
  EXPECT_NEAR(e.graph_launch_us, 12.0, 1e-9);
  EXPECT_EQ(e.graph_blas_command_samples, 8);
  EXPECT_NEAR(e.graph_blas_command_us, 3.0, 1e-9);
}

// With no plain graph to tell the launch: the device file's 9 us where the
// graphs took longer (20 us: 5.5 us a command), their own time where they
// took less (6 us: the commands cost nothing), so a replay keeps the step.
TEST(HostPace, WithOnlyCublasGraphsTheLaunchIsTheFilesOrLess) {
  const HostCostEstimate slow = blas_graphs_after(0, 200);
  EXPECT_EQ(slow.graph_samples, 4);
  EXPECT_NEAR(slow.graph_launch_us, 9.0, 1e-9);
  EXPECT_NEAR(slow.graph_blas_command_us, 5.5, 1e-9);
  const HostCostEstimate fast = blas_graphs_after(0, 60);
  EXPECT_NEAR(fast.graph_launch_us, 6.0, 1e-9);
  EXPECT_NEAR(fast.graph_blas_command_us, 0.0, 1e-9);
}

// A loop whose every graph traces a cuBLAS call again (a notriton body):
// five graphs launched 9.5 us apart, each of 4 commands recorded again (3 at
// the file's 1.5 us, the call at its 5.5 us) after a 9 us launch: 19 us by
// the device file, so the host ran at half its pace. No graph tells the
// launch from the retrace: each is the file's at that pace (4.5 and 2.75
// us), and so is the re-recording another module's graphs would pay.
TEST(HostPace, WhatTheRunCannotTellApartIsTheFilesAtTheHostsPace) {
  StepBuilder b;
  b.add(0, 10, "k0");
  for (int g = 0; g < 5; ++g) {
    const int64_t t = 100 + 95 * g;
    b.add(t, t + 20, "n0");
    b.add(t + 19, t + 40, "n1");
  }
  HostWorkOf work;
  work.rerecorded_commands = {{"n0", 4}, {"n1", 4}};
  work.retraced_commands = {{"n0", 1}, {"n1", 1}};
  DeviceModel m = file_model();
  m.host_graph_rerecord_us = 1.5;
  m.host_graph_retrace_us = 5.5;
  const HostCostEstimate e = estimate_host_costs(b.trace, {"n0", "n1"}, m, work);
  EXPECT_EQ(e.pace_samples, 4);
  EXPECT_NEAR(e.pace, 0.5, 1e-9);
  EXPECT_EQ(e.graph_samples, 0);
  EXPECT_EQ(e.graph_retrace_samples, 4);
  EXPECT_NEAR(e.graph_retrace_us, 2.75, 1e-9);
  const DeviceModel used = with_host_costs(m, e);
  EXPECT_NEAR(used.host_graph_launch_us, 4.5, 1e-9);
  EXPECT_NEAR(used.host_graph_rerecord_us, 0.75, 1e-9);
  EXPECT_NEAR(used.host_graph_retrace_us, 2.75, 1e-9);
  EXPECT_NEAR(used.host_kernel_launch_us, 4.5, 1e-9);  // no kernel launched alone: the file's at that pace
  EXPECT_NE(host_costs_line(e, m).find("graph launch 4.5 us (device file x0.50: 0 launch-bound)"),
            std::string::npos)
      << host_costs_line(e, m);
  EXPECT_NE(host_costs_line(e, m).find("the host's pace x0.50 of the device file's costs (4 issues)"),
            std::string::npos);
}

// A run slower than the file (kernels 18 us apart, the file's 9) may be the
// GPU's pace, not the host's: the pace stays 1 and what the run cannot
// estimate keeps the file's cost.
TEST(HostPace, APaceSlowerThanTheFilesIsNotTaken) {
  StepBuilder b;
  for (int i = 0; i < 6; ++i) b.add(180 * i, 180 * i + 20, "k" + std::to_string(i));
  const HostCostEstimate e = estimate_host_costs(b.trace, {}, file_model());
  EXPECT_EQ(e.pace_samples, 4);
  EXPECT_DOUBLE_EQ(e.pace, 1.0);
  EXPECT_NEAR(e.kernel_launch_us, 18.0, 1e-9);
  const DeviceModel used = with_host_costs(file_model(), e);
  EXPECT_DOUBLE_EQ(used.host_library_call_us, 21.5);
  EXPECT_DOUBLE_EQ(used.host_graph_launch_us, 9.0);
  EXPECT_EQ(host_costs_line(e, file_model()).find("pace"), std::string::npos)
      << host_costs_line(e, file_model());
}

// Too few launch-bound issues to tell a pace: the file's costs as they are.
TEST(HostPace, NoPaceFromFewerThanThreeIssues) {
  StepBuilder b;
  for (int i = 0; i < 4; ++i) b.add(50 * i, 50 * i + 20, "k" + std::to_string(i));
  const HostCostEstimate e = estimate_host_costs(b.trace, {}, file_model());
  EXPECT_EQ(e.pace_samples, 2);  // k2 and k3: k0 is not known to be launch-bound, k1 is the first anchor
  EXPECT_DOUBLE_EQ(e.pace, 1.0);
  EXPECT_DOUBLE_EQ(with_host_costs(file_model(), e).host_library_call_us, 21.5);
}

TEST(HostPace, FarOffIntervalsAreLeftOut) {
  // Paced at 10 us but one gap of 200 us (a host hiccup): 20x the device
  // file's 9 us, it is left out.
  StepBuilder b;
  for (int i = 0; i < 6; ++i) b.add(100 * i, 100 * i + 20, "k" + std::to_string(i));
  b.add(2500, 2520, "late");
  const HostCostEstimate e = estimate_host_costs(b.trace, {}, file_model());
  EXPECT_EQ(e.kernel_samples, 4);
  EXPECT_NEAR(e.kernel_launch_us, 10.0, 1e-9);
}

TEST(HostPace, TheKernelBandDoesNotMoveWithTheDeviceFile) {
  // Paced at 7 us with one slow launch of 25 us (a slow call's host): inside
  // the kernels' fixed 3-27 us band, so it counts whatever the device file
  // says a launch costs; 30 us is outside it.
  auto estimate = [](int64_t slow_us10, double file_us) {
    StepBuilder b;
    int64_t t = 0;
    for (int i = 0; i < 6; ++i, t += 70) b.add(t, t + 20, "k" + std::to_string(i));
    b.add(t - 70 + slow_us10, t - 70 + slow_us10 + 20, "slow");
    DeviceModel m = file_model();
    m.host_kernel_launch_us = file_us;
    return estimate_host_costs(b.trace, {}, m);
  };
  for (double file_us : {5.0, 7.05, 9.0}) {
    const HostCostEstimate in = estimate(250, file_us);
    EXPECT_EQ(in.kernel_samples, 5) << file_us;
    EXPECT_NEAR(in.kernel_launch_us, (4 * 7.0 + 25.0) / 5, 1e-9) << file_us;
    const HostCostEstimate out = estimate(300, file_us);
    EXPECT_EQ(out.kernel_samples, 4) << file_us;
    EXPECT_NEAR(out.kernel_launch_us, 7.0, 1e-9) << file_us;
  }
}

}  // namespace
}  // namespace sl::sim
