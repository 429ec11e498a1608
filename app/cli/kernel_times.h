#pragma once
// `run --backend sim --kernel-times RUN`: the simulator costed by a linked
// capture's measured kernels (sim/trace_driven.h).

#include <cstdint>
#include <memory>
#include <string>

#include "core/common/status.h"
#include "core/exec/backend.h"
#include "sim/sim_backend.h"
#include "sim/trace_driven.h"

namespace sl::cli {

struct TraceDrivenBackend {
  std::unique_ptr<exec::Backend> backend;
  std::string description;  // "h200 + kernel times of run 3 (31 steps)"
};

// The measured times of a linked capture (`run` in the database `db`).
Result<sim::MeasuredTimes> measured_kernel_times(const std::string& db, const std::string& run,
                                                 int64_t* run_id = nullptr);

// `launch`: how the simulated module's kernels are launched (command buffers).
Result<TraceDrivenBackend> trace_driven_backend(const std::string& db, const std::string& run,
                                                const std::string& device, sim::LaunchSetup launch = {});

}  // namespace sl::cli
