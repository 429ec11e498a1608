#pragma once
// Scores an assignment the way `streamlens run PROGRAM --backend sim` would:
// lower the module with the overrides, simulate it with the same backend
// (device model, or trace-driven with measured kernel times), take the
// makespan. The same makespan, to the nanosecond, as that run reports.

#include <cstdint>
#include <optional>

#include "core/common/status.h"
#include "core/hlo/module.h"
#include "core/sched/lowering.h"
#include "sim/device_model.h"
#include "sim/suggest/search.h"
#include "sim/trace_driven.h"

namespace sl::sim {

struct SimEvaluatorOptions {
  int64_t replicas = 0;    // 0: the module's (as `streamlens run`)
  int64_t partitions = 0;
  bool allow_tf32 = false;
  // --kernel-times: each instruction costs what it took in a linked capture.
  std::optional<MeasuredTimes> measured;
};

// The module must outlive the evaluator.
Evaluator make_sim_evaluator(const hlo::Module& module, const DeviceModel& model, SimEvaluatorOptions options);

}  // namespace sl::sim
