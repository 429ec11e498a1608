#pragma once
// The `sim` backend (docs/architecture.md): simulates a lowered program on a
// device model. No numerics; deterministic.

#include <memory>
#include <string>

#include "core/common/status.h"
#include "core/exec/backend.h"
#include "sim/command_buffers.h"
#include "sim/device_model.h"
#include "sim/trace_driven.h"

namespace sl::sim {

// The model is fixed at construction (RunOptions::device_model is how app/
// picks the file: load it with load_device_model). RunOptions::iterations > 1
// repeats the simulated run back to back with Event::iteration set; warmup
// iterations are skipped, since every iteration of a deterministic run is the
// same. allow_tf32 runs f32 GEMMs at the TF32 rate.
std::unique_ptr<exec::Backend> make_sim_backend(DeviceModel model);

// How the program's kernels are launched when it is an XLA executable whose
// thunk dump is known (sim/command_buffers.h).
struct LaunchSetup {
  bool xla_executable = false;  // false: every kernel pays kernel_launch_us, as for any HLO program
  // Per device, the graph launches of one execution; ignored when !command_buffers.
  std::vector<std::vector<CommandBuffer>> graphs;
  // false (--command-buffers off): every kernel is launched by the host one
  // by one (host_kernel_launch_us each, sim/engine.h HostIssue).
  bool command_buffers = true;
  // Per device, the thunks (indices of the lowered program) before which
  // XLA's host blocks until the main stream is done: each trip of a while
  // loop without a known trip count.
  std::vector<std::vector<uint32_t>> host_syncs;
  // Per device, per sync of host_syncs: the launches the host issues for the
  // loop's condition before it (its kernels and the predicate copy), each
  // costing host_kernel_launch_us.
  std::vector<std::vector<int64_t>> launches_before_syncs;
  // Per device, the thunks that launch a dynamic-slice fusion's work
  // (host_dynamic_slice_us when launched alone).
  std::vector<std::vector<uint32_t>> dynamic_slices;
};
std::unique_ptr<exec::Backend> make_sim_backend(DeviceModel model, LaunchSetup launch);

// Trace-driven (sim/trace_driven.h): each instruction costs what it took in
// the measured run's median step. With a LaunchSetup for an XLA executable,
// a graph node keeps its measured launch gap where the measured run launched
// it in a graph too, else pays the model's gap for its role; kernels launched
// alone are timed by the host-issue model, not by their measured gaps (which
// are its outcome, not its cause).
// Where the step's host pace is not the measured run's (the module is
// another compilation, MeasuredTimes::another_module; or some host costs come
// from the device file: too few launch-bound issues of a kind, or
// --host-costs device), the run also records its makespan at the fastest and
// slowest host pace the file gives (DeviceModel::host_pace_*_scale) as these
// counters; the range holds the step as simulated, the measured run's own
// pace being one call's.
std::unique_ptr<exec::Backend> make_trace_driven_sim_backend(DeviceModel model, MeasuredTimes measured,
                                                             LaunchSetup launch = {});
inline constexpr const char* kHostPaceFastCounter = "sim.makespan_at_fast_host_ns";
inline constexpr const char* kHostPaceSlowCounter = "sim.makespan_at_slow_host_ns";

}  // namespace sl::sim
