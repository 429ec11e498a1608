#pragma once
// Comparing two runs (docs/store.md): events matched per (device,
// instruction, occurrence) after reducing each run to its median iteration
// and one event per instruction launch (core/trace/iterations.h), makespans, per-instruction duration and start
// deltas, per-stream busy time, overlap and critical path of each run.

#include <cstdint>
#include <string>
#include <vector>

#include "core/trace/analysis.h"
#include "core/trace/host_probe.h"
#include "core/trace/run_info.h"
#include "core/trace/trace.h"

namespace sl::trace {

// One matched (or unmatched) event. The key is the instruction name, or the
// event's name for events that belong to no instruction (imported traces).
// occurrence counts the key's events on that device in start order.
struct InstructionDelta {
  int32_t device = 0;
  std::string instruction;
  int32_t occurrence = 0;
  std::string name;        // event name in A (or B when only in B)
  bool in_a = false;
  bool in_b = false;
  int64_t start_a_ns = 0;  // relative to each run's first event
  int64_t duration_a_ns = 0;
  int64_t start_b_ns = 0;
  int64_t duration_b_ns = 0;
  int32_t stream_a = 0;
  int32_t stream_b = 0;
  bool matched() const { return in_a && in_b; }
  int64_t duration_delta_ns() const { return saturating_sub(duration_b_ns, duration_a_ns); }  // B - A
  int64_t start_delta_ns() const { return saturating_sub(start_b_ns, start_a_ns); }
};

// Iterations a run needs before `compare` gives their spread.
inline constexpr int32_t kMinStepsForSpread = 4;

struct RunSummary {
  RunInfo info;
  int32_t iterations = 0;   // recorded iterations of the run
  int32_t iteration = -1;   // the one compared (median span) when there are several
  // The middle half of the iterations' lengths (the 25th and 75th
  // percentiles), when there are kMinStepsForSpread or more: how far a
  // step moves from step to step, which a difference of makespans has to
  // exceed to say anything. Zero otherwise.
  int64_t middle_half_low_ns = 0;
  int64_t middle_half_high_ns = 0;
  int64_t middle_half_width_ns() const { return middle_half_high_ns - middle_half_low_ns; }
  int64_t makespan_ns = 0;  // of the compared iteration
  std::vector<StreamBusy> streams;
  std::vector<DeviceIdle> idle;  // per device, in the compared iteration
  HostProbe host;                 // the host core's pace, where a capture measured it
  OverlapReport overlap;
  CriticalPath critical_path;
  std::vector<std::string> critical_path_names;  // "instruction (name)" per path event
};

struct Comparison {
  RunSummary a;
  RunSummary b;
  // Matched entries first, sorted by |duration delta|, then |start delta|
  // (largest first); then entries present in one run only.
  std::vector<InstructionDelta> deltas;
  int64_t matched = 0;
  int64_t only_in_a = 0;
  int64_t only_in_b = 0;
  int64_t makespan_delta_ns() const { return saturating_sub(b.makespan_ns, a.makespan_ns); }
};

Comparison compare_runs(const RunInfo& info_a, const Trace& a, const RunInfo& info_b, const Trace& b);

// For each of comparison.deltas, the index in `full` (the whole trace of run
// A, or of B when side_a is false) of the first event of the launch the
// delta compares, in the compared iteration; -1 when that run has none. What
// a timeline outlines for the delta.
std::vector<int64_t> delta_events(const Comparison& comparison, bool side_a, const Trace& full);

// max_rows = 0 prints every delta and every event of the critical paths;
// otherwise that many deltas, and a path's first and last max_rows / 2.
std::string format_comparison_text(const Comparison& comparison, size_t max_rows = 0);
// {"a":{"run","backend","device_model","makespan_ns","iterations","compared_iteration","middle_half_ns":[low,high],
//       "streams":[...],"idle":[...],"overlap":{...},"critical_path":{...}},
//  "b":{...},"makespan_a_ns","makespan_b_ns","makespan_delta_ns","matched","only_in_a","only_in_b","deltas":[...]}.
std::string comparison_json(const Comparison& comparison, int indent = -1);

}  // namespace sl::trace
