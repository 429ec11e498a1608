#pragma once
// Links a capture of an XLA program to the module that ran: finds each
// execution of the module (a step) in the captured kernels, and ties each
// kernel, library call and copy of a step to the instruction behind it.
//
// Steps are found by the module's own kernels (named by XLA, so unmistakable)
// in launch order; library kernels (cuBLAS), copies and memsets inside a step
// are then matched to the plan in order. Autotuning (XLA compiles while the
// program runs), other modules and host transfers stay outside the steps:
// their events get iteration -1.

#include <cstdint>
#include <vector>

#include "core/trace/trace.h"
#include "core/xla/launch_plan.h"

namespace sl::xla {

struct LinkOptions {
  // A partial match is given up after this share of the step's anchors went
  // unmatched (a kernel XLA's dump does not list, say).
  double max_miss_fraction = 0.1;
  size_t lookahead = 16;  // plan items searched ahead for a captured launch
};

struct StepSpan {
  int32_t device = 0;
  int32_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct LinkSummary {
  std::vector<StepSpan> steps;
  int64_t events_in_steps = 0;
  int64_t events_linked = 0;       // given an instruction
  int64_t work_ns_in_steps = 0;    // kernel, copy and memset time inside steps
  int64_t work_ns_linked = 0;
  int64_t autotuning_kernels = 0;
  int64_t events_outside_steps = 0;
};

// Rewrites `trace` in place: iteration = step (0, 1, ... per device; -1
// outside), instruction = the planned launch's instruction where matched,
// kernel kinds from the plan where it knows better. Adds `link_*` counters.
LinkSummary link_steps(trace::Trace& trace, const LaunchPlan& plan, const LinkOptions& options = {});

}  // namespace sl::xla
