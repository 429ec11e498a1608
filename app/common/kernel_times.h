#pragma once
// `run --backend sim --kernel-times RUN`: the simulator costed by a linked
// capture's measured kernels (sim/trace_driven.h).

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/common/status.h"
#include "core/exec/backend.h"
#include "core/hlo/module.h"
#include "core/trace/run_info.h"
#include "sim/device_model.h"
#include "sim/sim_backend.h"
#include "sim/trace_driven.h"

namespace sl::app {

struct TraceDrivenBackend {
  std::unique_ptr<exec::Backend> backend;
  int64_t run_id = 0;       // the linked capture the times come from
  std::string description;  // "h200 + kernel times of run 3 (31 steps)"
  std::string host_costs;   // the run summary's line on the host costs used
  std::string matching;     // how instructions were matched to the run's, when by content
};

// The measured times of a linked capture (`run` in the database `db`); with
// `host_costs_of` (the device file's model) the host costs estimated from it.
// With `target` (the module to simulate) and the run's linked module still
// readable, the target's instructions take the times of the run's
// instructions that do the same work, whatever their names
// (MeasuredTimes::source_of). `target_path`, the file `target` was read
// from: another file than the run's linked module is another call
// (MeasuredTimes::another_module); without it, another text is.
Result<sim::MeasuredTimes> measured_kernel_times(const std::string& db, const std::string& run,
                                                 int64_t* run_id = nullptr,
                                                 const sim::DeviceModel* host_costs_of = nullptr,
                                                 const hlo::Module* target = nullptr,
                                                 const std::string& target_path = "");

// The trips that `module`'s while loops without a known trip count ran in a
// linked capture: per loop, the median over steps of its predicate copies
// (the step linker gives them the loop's name) less one, the last
// condition's. A loop is the run's loop that does the same work, whatever
// its name, when the run's linked module can be read (another compilation
// numbers instructions anew). Loops the run shows no copy of are left out.
Result<std::map<std::string, int64_t>> measured_loop_trips(const std::string& db, const std::string& run,
                                                           const hlo::Module& module);

// `launch`: how the simulated module's kernels are launched (command buffers).
// `host_costs_from_capture` (--host-costs capture, the default): the host
// issue costs are estimated from the run (sim/host_pace.h), else the device
// file's apply.
Result<TraceDrivenBackend> trace_driven_backend(const std::string& db, const std::string& run,
                                                const std::string& device, sim::LaunchSetup launch = {},
                                                bool host_costs_from_capture = true,
                                                const hlo::Module* target = nullptr,
                                                const std::string& target_path = "");

// The device file a simulation costed by a capture's kernel times takes when
// none is named: the stock file of the GPU the capture ran on (its device
// model, "NVIDIA H100 80GB HBM3"); h200 where the run names no GPU a stock
// file describes (captures before GPU names were recorded say "cuda").
std::string device_of_capture(const trace::RunInfo& info);

struct DeviceOfRun {
  std::string device;
  std::string note;  // for the run's summary: which file, and why
};
// device_of_capture of `run` (an id, last or last-N) in the database `db`.
Result<DeviceOfRun> device_of_run(const std::string& db, const std::string& run);

// What a simulation of a run again is costed by: a linked capture's own
// kernel times, or those a trace-driven simulation was costed by (its config's
// "kernel_times"), with the module file simulated (the capture's
// "linked_module", the simulation's "module_path") and the device file. None (run 0) for
// any other run.
struct KernelTimesSource {
  int64_t run = 0;
  std::string module_path;
  std::string device = "h200";
};
KernelTimesSource kernel_times_source(const trace::RunInfo& info);

}  // namespace sl::app
