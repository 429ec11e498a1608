#pragma once
// Calibration samples (sim/calibrate.h): each measured event matched to the
// thunk it ran, with how long other work ran beside it on its device.
// Internal to sl_sim.

#include <cstdint>
#include <string>
#include <vector>

#include "core/sched/thunk.h"
#include "sim/calibrate.h"
#include "sim/kernel_content.h"

namespace sl::sim::calibrate_internal {

// An event matched to the thunk it ran, with its overlaps on its device.
struct Sample {
  const sched::Thunk* thunk = nullptr;
  const CalibrationRun* run = nullptr;
  // What the simulator costs the thunk by: its content in the run's module
  // (the bytes a fusion's users read, not its operands whole), or the
  // thunk's own numbers where there is no content to read.
  KernelWork work;
  double duration_ns = 0;
  double collective_overlap_ns = 0;  // time a collective ran beside it
  double kernel_overlap_ns = 0;      // time a compute kernel on another stream ran beside it
  double confined_overlap_ns = 0;    // of that, time GEMMs confined to fewer SMs ran beside it
  bool started_inside_collective = false;  // a kernel that began while a collective of its device ran
  int32_t device = 0;
  int32_t stream = 0;
  int64_t start_ns = 0, end_ns = 0;
};

// Matches one run's events to thunks and measures their overlaps; events
// that name no instruction of the program are counted in a note.
void collect_samples(const CalibrationRun& run, std::vector<Sample>* out, std::vector<std::string>* notes);

// Ran beside no collective and no kernel of another stream.
inline bool alone(const Sample& s) { return s.collective_overlap_ns == 0 && s.kernel_overlap_ns == 0; }

}  // namespace sl::sim::calibrate_internal
