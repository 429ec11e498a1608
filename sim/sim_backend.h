#pragma once
// The `sim` backend (docs/architecture.md): simulates a lowered program on a
// device model. No numerics; deterministic.

#include <memory>
#include <string>

#include "core/common/status.h"
#include "core/exec/backend.h"
#include "sim/device_model.h"
#include "sim/trace_driven.h"

namespace sl::sim {

// The model is fixed at construction (RunOptions::device_model is how app/
// picks the file: load it with load_device_model). RunOptions::iterations > 1
// repeats the simulated run back to back with Event::iteration set; warmup
// iterations are skipped, since every iteration of a deterministic run is the
// same. allow_tf32 runs f32 GEMMs at the TF32 rate.
std::unique_ptr<exec::Backend> make_sim_backend(DeviceModel model);

// Trace-driven (sim/trace_driven.h): each instruction costs what it took in
// the measured run's median step.
std::unique_ptr<exec::Backend> make_trace_driven_sim_backend(DeviceModel model, MeasuredTimes measured);

}  // namespace sl::sim
