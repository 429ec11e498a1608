#include "sim/host_pace.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <set>
#include <vector>

#include "core/trace/iterations.h"

namespace sl::sim {
namespace {

// The step whose span is the median one (as sim/trace_driven.cc picks it).
int32_t median_step(const trace::Trace& linked, const std::vector<int32_t>& steps) {
  std::map<int32_t, std::pair<int64_t, int64_t>> span;
  for (int32_t s : steps) span[s] = {INT64_MAX, INT64_MIN};
  for (const trace::Event& e : linked.events) {
    auto it = span.find(e.iteration);
    if (e.iteration < 0 || e.kind == trace::EventKind::kWait || it == span.end()) continue;
    it->second.first = std::min(it->second.first, e.start_ns);
    it->second.second = std::max(it->second.second, e.end_ns);
  }
  std::vector<std::pair<int64_t, int32_t>> by_span;
  for (const auto& [s, se] : span) {
    if (se.second >= se.first) by_span.emplace_back(se.second - se.first, s);
  }
  if (by_span.empty()) return -1;
  std::sort(by_span.begin(), by_span.end());
  return by_span[(by_span.size() - 1) / 2].second;
}

enum class Issue { kNone, kKernel, kLibrary, kSlice, kGraph, kDnn };

// The host's issues between two launch-bound ones (the first excluded, the
// second included): the host spent `span_ns` on them, as it never waits for
// the GPU between them. A sync between them (a while loop without a known
// trip count) adds the GPU's time to the interval; the 3x band
// (robust_cost_us) leaves the worst of those out.
struct Interval {
  int64_t span_ns = 0;
  // dnn: cuDNN calls, whose host code between their own launches is no
  // issue cost of any kind (sim/command_buffers.h, after_issue_ns): an
  // interval with one estimates nothing.
  int64_t kernels = 0, libraries = 0, slices = 0, graphs = 0, dnn = 0;
  int64_t rerecorded_commands = 0;  // of the graphs launched
  int64_t retraced_commands = 0;
  int64_t blas_commands = 0;  // of the graphs launched, outside dynamic-slice fusions
};

// One device's records of the step, by start: its host issues and the
// intervals between its launch-bound ones.
void intervals_of_device(const trace::Trace& linked, std::vector<const trace::Event*> events,
                         const std::unordered_set<std::string>& in_graph, const HostWorkOf& work,
                         std::vector<Interval>& out) {
  std::sort(events.begin(), events.end(), [](const trace::Event* a, const trace::Event* b) {
    return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns < b->end_ns;
  });
  std::map<int32_t, int64_t> stream_end;  // the last end on each stream so far
  std::multiset<int64_t> ends;            // the ends of the records started before
  const trace::Event* previous = nullptr;
  std::optional<int64_t> anchor;  // the last launch-bound issue's start
  Interval open;
  for (const trace::Event* e : events) {
    const std::string& instruction = linked.instruction_of(*e);
    const bool node = e->instruction != 0 && in_graph.count(instruction) > 0;
    const bool previous_node = previous != nullptr && previous->instruction != 0 &&
                               in_graph.count(linked.instruction_of(*previous)) > 0;
    // Its stream was idle and nothing on the device ended just before (a
    // wait it may have had): nothing on the GPU held it back, it started at
    // its issue. The step's first record is not known to be.
    auto s = stream_end.find(e->stream);
    const bool stream_free = s == stream_end.end() || s->second + kLaunchBoundSlackNs <= e->start_ns;
    auto near = ends.lower_bound(e->start_ns - kLaunchBoundSlackNs);
    const bool no_wait = near == ends.end() || *near > e->start_ns;
    const bool bound = previous != nullptr && stream_free && no_wait;
    Issue issue = Issue::kKernel;
    if (node) {
      // A node right after another is the graph's (its DAG started it); one
      // after idle time starts a graph launch (a graph launched right behind
      // another one is not told apart: its launch is missed).
      issue = previous_node && !bound ? Issue::kNone : Issue::kGraph;
    } else if (previous != nullptr && e->instruction != 0 && previous->instruction == e->instruction) {
      issue = Issue::kNone;  // a thunk of several kernels (a cuBLAS call) is issued once
    } else if (e->instruction != 0 && work.dnn_call.count(instruction) > 0) {
      issue = Issue::kDnn;
    } else if (e->kind == trace::EventKind::kGemm && instruction.find("fusion") == std::string::npos) {
      issue = Issue::kLibrary;
    } else if (e->instruction != 0 && work.dynamic_slice.count(instruction) > 0) {
      issue = Issue::kSlice;
    }
    if (issue == Issue::kGraph) {
      if (auto r = work.rerecorded_commands.find(instruction); r != work.rerecorded_commands.end()) {
        open.rerecorded_commands += r->second;
      }
      if (auto r = work.retraced_commands.find(instruction); r != work.retraced_commands.end()) {
        open.retraced_commands += r->second;
      }
      if (auto c = work.blas_commands.find(instruction); c != work.blas_commands.end()) {
        open.blas_commands += c->second;
      }
    }
    if (issue != Issue::kNone) {
      (issue == Issue::kKernel    ? open.kernels
       : issue == Issue::kLibrary ? open.libraries
       : issue == Issue::kSlice   ? open.slices
       : issue == Issue::kDnn     ? open.dnn
                                  : open.graphs) += 1;
      if (bound) {
        if (anchor) {
          open.span_ns = e->start_ns - *anchor;
          out.push_back(open);
        }
        anchor = e->start_ns;
        open = Interval{};
      }
    }
    auto& end = stream_end[e->stream];
    end = std::max(end, e->end_ns);
    ends.insert(e->end_ns);
    previous = e;
  }
}

// (per-issue cost in ns, issues) of intervals -> the host's cost of one
// issue, in us, and the issues it rests on: the intervals' total over their
// issues (so the host's time between anchors is reproduced), leaving out
// intervals more than kOutlierFactor off `band_us` (a record that waited for
// the GPU in a way the trace does not show; XLA's host speed varied 1.6x
// between calls, not 3x). The band of library calls, dynamic slices and
// graph launches is around the device file's cost.
constexpr double kOutlierFactor = 3.0;
// Kernels launched alone: 3 to 27 us a launch. The device file's cost is the
// median of calls, and a slow call's intervals reach past 3x it: one H200's
// XLA took 5.0-9.4 us a kernel in 28 calls of small programs
// (bench/FIDELITY-real.md, "The host's pace"), single intervals of one
// launch up to 23 us; intervals that are no kernel launch (around a CNN's
// cuDNN calls, a transformer's waits) were 28 us a launch and more.
constexpr double kKernelBandUs = 9.0;
std::pair<double, int64_t> robust_cost_us(const std::vector<std::pair<double, int64_t>>& v, double band_us) {
  const double center = band_us * 1e3;
  double sum = 0;
  int64_t issues = 0;
  for (const auto& [value, weight] : v) {
    if (center > 0 && (value > kOutlierFactor * center || value * kOutlierFactor < center)) continue;
    sum += value * static_cast<double>(weight);
    issues += weight;
  }
  return {issues == 0 ? 0.0 : std::max(0.0, sum / static_cast<double>(issues)) / 1e3, issues};
}

// The host's pace (HostCostEstimate::pace): the intervals' span over what
// the device file's costs give their issues, re-recordings included,
// leaving out intervals more than kOutlierFactor off (as each kind does);
// and the issues of those kept. At most 1: an interval is the host's cost
// or longer (a loop of graphs the GPU holds back starts each graph a steady
// 1.6-2.3 us after the last, its trips as far apart as the GPU's work), so
// a run slower than the file may be the GPU's pace; a faster one is the
// host's.
std::pair<double, int64_t> pace_of(const std::vector<Interval>& intervals, const DeviceModel& file) {
  double span = 0, costed = 0;
  int64_t issues = 0;
  for (const Interval& i : intervals) {
    const int64_t retraced = std::min(i.retraced_commands, i.rerecorded_commands);
    const double us = static_cast<double>(i.kernels) * file.host_kernel_launch_us +
                      static_cast<double>(i.libraries) * file.host_library_call_us +
                      static_cast<double>(i.slices) * file.host_dynamic_slice_us +
                      static_cast<double>(i.graphs) * file.host_graph_launch_us +
                      static_cast<double>(i.blas_commands) * file.host_graph_blas_command_us +
                      graph_rerecord_us(file, i.rerecorded_commands, retraced);
    const double ns = us * 1e3, measured = static_cast<double>(i.span_ns);
    if (ns <= 0 || measured > kOutlierFactor * ns || measured * kOutlierFactor < ns) continue;
    span += measured;
    costed += ns;
    issues += i.kernels + i.libraries + i.slices + i.graphs;
  }
  return {issues < kMinHostSamples ? 1.0 : std::min(1.0, span / costed), issues};
}

}  // namespace

HostCostEstimate estimate_host_costs(const trace::Trace& linked, const std::unordered_set<std::string>& in_graph,
                                     const DeviceModel& device_file, const HostWorkOf& work) {
  HostCostEstimate out;
  const int32_t step = median_step(linked, trace::iterations_of(linked));
  if (step < 0) return out;
  std::map<int32_t, std::vector<const trace::Event*>> by_device;
  for (const trace::Event& e : linked.events) {
    if (e.iteration == step && e.kind != trace::EventKind::kWait) by_device[e.device].push_back(&e);
  }
  std::vector<Interval> intervals;
  for (auto& [device, events] : by_device) intervals_of_device(linked, std::move(events), in_graph, work, intervals);
  std::erase_if(intervals, [](const Interval& i) { return i.dnn > 0; });
  // The pace first: each kind below takes the others it holds off at the
  // pace where they are not estimated (with_host_costs).
  std::tie(out.pace, out.pace_samples) = pace_of(intervals, device_file);
  // Kernels first (intervals of kernels alone), then library calls with the
  // kernels' cost taken off, then dynamic-slice fusions and graph launches
  // with the kinds before them taken off (and a graph's re-recording, at the
  // device file's cost at the host's pace); each the intervals' total over
  // their issues of the kind (robust_cost_us). The samples: the issues of
  // the kind in the intervals kept.
  auto rest_ns = [](const Interval& i, const DeviceModel& m) {
    return static_cast<double>(i.span_ns) - static_cast<double>(i.kernels) * m.host_kernel_launch_us * 1e3 -
           static_cast<double>(i.libraries) * m.host_library_call_us * 1e3 -
           static_cast<double>(i.slices) * m.host_dynamic_slice_us * 1e3;
  };
  std::vector<std::pair<double, int64_t>> kernel, library, slice;
  for (const Interval& i : intervals) {
    if (i.libraries == 0 && i.slices == 0 && i.graphs == 0 && i.kernels > 0) {
      kernel.emplace_back(static_cast<double>(i.span_ns) / static_cast<double>(i.kernels), i.kernels);
    }
  }
  std::tie(out.kernel_launch_us, out.kernel_samples) = robust_cost_us(kernel, kKernelBandUs);
  const DeviceModel so_far = with_host_costs(device_file, out);
  for (const Interval& i : intervals) {
    if (i.libraries > 0 && i.slices == 0 && i.graphs == 0) {
      Interval others = i;
      others.libraries = 0;
      library.emplace_back(rest_ns(others, so_far) / static_cast<double>(i.libraries), i.libraries);
    }
  }
  std::tie(out.library_call_us, out.library_samples) = robust_cost_us(library, device_file.host_library_call_us);
  DeviceModel then = with_host_costs(device_file, out);
  for (const Interval& i : intervals) {
    if (i.slices > 0 && i.graphs == 0) {
      Interval others = i;
      others.slices = 0;
      slice.emplace_back(rest_ns(others, then) / static_cast<double>(i.slices), i.slices);
    }
  }
  std::tie(out.dynamic_slice_us, out.dynamic_slice_samples) = robust_cost_us(slice, device_file.host_dynamic_slice_us);
  then = with_host_costs(device_file, out);
  // Graph launches, their cuBLAS commands, then cuBLAS calls traced again:
  // what is left of an interval with graphs (rest_ns counts no graph
  // launch), less the rest of its re-recording, is their launches, commands
  // and retraces. An interval more than kOutlierFactor off the device file's
  // launches is left out (as for the other kinds). Each is estimated apart
  // (below): a notriton loop's body is most of its launches, and what its
  // cuBLAS commands cost is no launch's: folded into one graph launch it
  // would cost the other module's graphs too.
  struct GraphRest {
    double rest_ns;
    int64_t graphs, retraced, blas;
  };
  std::vector<GraphRest> kept;
  for (const Interval& i : intervals) {
    if (i.graphs == 0) continue;
    const int64_t retraced = std::min(i.retraced_commands, i.rerecorded_commands);
    const double rest = rest_ns(i, then) - graph_rerecord_us(then, i.rerecorded_commands - retraced, 0) * 1e3;
    // The band is the launches' alone, the retraces recorded as any command:
    // a retrace far over a launch is more likely a wait the trace does not
    // show (gaf's notriton loop: 80 us an interval) than the host's.
    const double center = static_cast<double>(i.graphs) * device_file.host_graph_launch_us * 1e3;
    const double launches = rest - graph_rerecord_us(then, retraced, 0) * 1e3;
    if (center > 0 && (launches > kOutlierFactor * center || launches * kOutlierFactor < center)) continue;
    kept.push_back({rest, i.graphs, retraced, i.blas_commands});
  }
  // Each kind from its own graphs, the kinds before taken off: launches of
  // graphs with neither cuBLAS commands nor retraces, then cuBLAS commands
  // (graphs without retraces), then retraces.
  auto estimate_of = [&](auto of_kind, auto samples_of, auto known_ns, double& us, int64_t& samples) {
    double total = 0;
    for (const GraphRest& g : kept) {
      if (!of_kind(g)) continue;
      total += g.rest_ns - known_ns(g);
      samples += samples_of(g);
    }
    us = samples == 0 ? 0.0 : std::max(0.0, total) / static_cast<double>(samples) / 1e3;
  };
  const auto graphs_of = [](const GraphRest& g) { return g.graphs; };
  estimate_of([](const GraphRest& g) { return g.retraced == 0 && g.blas == 0; }, graphs_of,
              [](const GraphRest&) { return 0.0; }, out.graph_launch_us, out.graph_samples);
  const bool plain_graphs = out.graph_samples >= kMinHostSamples;
  if (!plain_graphs) {
    // Every graph holds cuBLAS commands (a notriton loop's body and little
    // else): no launch to tell them from. Their launch is the device file's
    // at the host's pace where they took longer, the rest their commands';
    // their own time where they took less (a fast host), their commands then
    // costing nothing.
    double per_graph_us = 0;
    int64_t graphs = 0;
    estimate_of([](const GraphRest& g) { return g.retraced == 0; }, graphs_of, [](const GraphRest&) { return 0.0; },
                per_graph_us, graphs);
    out.graph_samples = graphs;
    out.graph_launch_us = std::min(per_graph_us, then.host_graph_launch_us);
  }
  then = with_host_costs(device_file, out);
  const auto launches_ns = [&](const GraphRest& g) {
    return static_cast<double>(g.graphs) * then.host_graph_launch_us * 1e3;
  };
  estimate_of([](const GraphRest& g) { return g.retraced == 0 && g.blas > 0; },
              [](const GraphRest& g) { return g.blas; }, launches_ns, out.graph_blas_command_us,
              out.graph_blas_command_samples);
  then = with_host_costs(device_file, out);
  estimate_of([](const GraphRest& g) { return g.retraced > 0; }, [](const GraphRest& g) { return g.retraced; },
              [&](const GraphRest& g) {
                return launches_ns(g) + static_cast<double>(g.blas) * then.host_graph_blas_command_us * 1e3;
              },
              out.graph_retrace_us, out.graph_retrace_samples);
  return out;
}

DeviceModel with_host_costs(DeviceModel model, const HostCostEstimate& estimate) {
  if (estimate.pace_samples >= kMinHostSamples) {
    for (double* us : {&model.host_kernel_launch_us, &model.host_library_call_us, &model.host_graph_launch_us,
                       &model.host_graph_rerecord_us, &model.host_graph_retrace_us,
                       &model.host_graph_blas_command_us, &model.host_dynamic_slice_us}) {
      *us *= estimate.pace;
    }
  }
  if (estimate.kernel_samples >= kMinHostSamples) model.host_kernel_launch_us = estimate.kernel_launch_us;
  if (estimate.library_samples >= kMinHostSamples) model.host_library_call_us = estimate.library_call_us;
  if (estimate.graph_samples >= kMinHostSamples) model.host_graph_launch_us = estimate.graph_launch_us;
  if (estimate.dynamic_slice_samples >= kMinHostSamples) model.host_dynamic_slice_us = estimate.dynamic_slice_us;
  if (estimate.graph_retrace_samples >= kMinHostSamples) model.host_graph_retrace_us = estimate.graph_retrace_us;
  if (estimate.graph_blas_command_samples >= kMinHostSamples) {
    model.host_graph_blas_command_us = estimate.graph_blas_command_us;
  }
  return model;
}

std::string host_costs_line(const HostCostEstimate& estimate, const DeviceModel& device_file) {
  // At the file's own pace (too few samples, or a run no faster) the line says nothing of it.
  const bool paced = estimate.pace_samples >= kMinHostSamples && estimate.pace < 1;
  const double pace = paced ? estimate.pace : 1.0;
  const std::string file = paced ? fmt::format("device file x{:.2f}", pace) : std::string("device file");
  auto one = [&](const char* what, double us, int64_t samples, double file_us) {
    if (samples >= kMinHostSamples) return fmt::format("{} {:.1f} us ({} launch-bound)", what, us, samples);
    return fmt::format("{} {:.1f} us ({}: {} launch-bound)", what, file_us * pace, file, samples);
  };
  return one("kernel", estimate.kernel_launch_us, estimate.kernel_samples,
             device_file.host_kernel_launch_us) +
         ", " +
         one("library call", estimate.library_call_us, estimate.library_samples,
             device_file.host_library_call_us) +
         ", " +
         one("graph launch", estimate.graph_launch_us, estimate.graph_samples,
             device_file.host_graph_launch_us) +
         (estimate.dynamic_slice_samples > 0
              ? ", " + one("dynamic slice", estimate.dynamic_slice_us, estimate.dynamic_slice_samples,
                           device_file.host_dynamic_slice_us)
              : std::string{}) +
         (estimate.graph_blas_command_samples > 0
              ? ", " + one("graph cuBLAS command", estimate.graph_blas_command_us,
                           estimate.graph_blas_command_samples, device_file.host_graph_blas_command_us)
              : std::string{}) +
         (estimate.graph_retrace_samples > 0
              ? ", " + one("cuBLAS call traced again", estimate.graph_retrace_us,
                           estimate.graph_retrace_samples, device_file.host_graph_retrace_us)
              : std::string{}) +
         (paced ? fmt::format("; the host's pace x{:.2f} of the device file's costs ({} issues)", pace,
                              estimate.pace_samples)
                : std::string{});
}

}  // namespace sl::sim
