#pragma once
// The host's pace in a measured run (docs/simulator.md, "Host costs from the
// capture"): XLA's host speed differs from call to call (the same mlp step
// launched kernel by kernel took 198.0, 178.5 and 154.5 us in three calls),
// so a trace-driven replay takes the host-issue costs (sim/engine.h,
// HostIssue) from the run it replays, as it takes the kernel times.
//
// Where a kernel was launch-bound (its stream predecessor had ended before it
// started and nothing else on its device ended just before, so nothing on the
// GPU held it back) it started when the host issued it. The host never waits
// for the GPU between syncs, so the start gap between two launch-bound issues
// is the host's cost of the issues after the first up to the second, hidden
// ones included.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/trace/trace.h"
#include "sim/device_model.h"

namespace sl::sim {

// Fewer launch-bound samples of a kind than this: the device file's value.
inline constexpr int64_t kMinHostSamples = 3;
// A kernel starting within this of an end on its device may have waited for it.
inline constexpr int64_t kLaunchBoundSlackNs = 1000;

struct HostCostEstimate {
  // From the intervals between launch-bound issues of the measured run's
  // median step (their total over their issues, intervals more than 3x off
  // a band's center left out: 9 us for kernels, the device file's value for
  // the others), in us: kernels from intervals of
  // kernels alone, then
  // library calls and graph launches with the others' costs taken off; a kind
  // with fewer than kMinHostSamples issues in its intervals keeps its
  // device-file value. The samples: those issues.
  double kernel_launch_us = 0;
  double library_call_us = 0;
  double graph_launch_us = 0;
  double dynamic_slice_us = 0;
  // A cuBLAS call inside a dynamic-slice fusion, traced again when its
  // graph is recorded again (DeviceModel::host_graph_retrace_us): from the
  // intervals with such graphs, their launches at graph_launch_us; graph
  // launches come from the other graphs only. The samples: those calls.
  double graph_retrace_us = 0;
  // A cuBLAS command of a graph (outside a dynamic-slice fusion), at each
  // launch (DeviceModel::host_graph_blas_command_us): from the intervals of
  // graphs with such commands and no retrace, their launches taken off;
  // graph launches come from the graphs with neither. The samples: those commands.
  double graph_blas_command_us = 0;
  int64_t kernel_samples = 0;
  int64_t library_samples = 0;
  int64_t graph_samples = 0;
  int64_t dynamic_slice_samples = 0;
  int64_t graph_retrace_samples = 0;
  int64_t graph_blas_command_samples = 0;
  // The host's pace against the device file: the intervals' total span over
  // what the file's costs give their issues (re-recordings included). A kind
  // the run cannot estimate (too few samples, or never apart from another:
  // a graph's re-recording, a loop graph's launch where every graph retraces
  // a cuBLAS call) takes the file's cost times this, as the host that ran
  // the kinds it can estimate ran at this pace. At most 1 (an interval may
  // be the GPU's, never shorter than the host's); 1 with fewer than
  // kMinHostSamples issues. The samples: the issues of the intervals kept.
  double pace = 1;
  int64_t pace_samples = 0;
};

// More of what the measured run's dump says about its launches: its
// dynamic-slice fusions, and the nodes of graphs XLA records again before
// each launch with their graph's command count.
struct HostWorkOf {
  std::unordered_set<std::string> dynamic_slice;
  std::unordered_map<std::string, int64_t> rerecorded_commands;
  std::unordered_map<std::string, int64_t> retraced_commands;  // of those, cuBLAS calls traced again
  // The nodes of graphs with cuBLAS commands outside dynamic-slice fusions, with their count.
  std::unordered_map<std::string, int64_t> blas_commands;
  // cuDNN calls: their host code runs between their own launches (a memset,
  // then 10-30 us, then the kernel), time that is no kernel launch's.
  std::unordered_set<std::string> dnn_call;
};

// `linked`: a linked capture (its events carry their step as iteration).
// `in_graph`: the instructions it ran as graph nodes (only a graph's first
// node is issued by the host: a graph launch). A library call is a GEMM record
// of an instruction that is not a fusion (XLA's cuBLAS custom-call thunk).
// `device_file`: the costs a kind with too few samples keeps, and the cost
// of re-recording a graph, which is taken off its launch (too few a step to
// be told apart from the launch). Dynamic-slice fusions are estimated after
// library calls, graph launches last.
HostCostEstimate estimate_host_costs(const trace::Trace& linked, const std::unordered_set<std::string>& in_graph,
                                     const DeviceModel& device_file, const HostWorkOf& work = {});

// `model` with every host cost at the estimate's pace, then the estimated
// costs where a kind had enough samples.
DeviceModel with_host_costs(DeviceModel model, const HostCostEstimate& estimate);

// "kernel 8.7 us (14 launch-bound), library call 21.0 us (4), graph launch
// 9.0 us (device file: 0 launch-bound)", given the device file's model.
std::string host_costs_line(const HostCostEstimate& estimate, const DeviceModel& device_file);

}  // namespace sl::sim
