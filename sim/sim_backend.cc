#include "sim/sim_backend.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "sim/engine.h"
#include "sim/trace_driven.h"

namespace sl::sim {
namespace {

class SimBackend : public exec::Backend {
 public:
  explicit SimBackend(DeviceModel model, std::optional<MeasuredTimes> measured = std::nullopt)
      : model_(std::move(model)), measured_(std::move(measured)) {}

  std::string name() const override { return "sim"; }

  Result<exec::RunOutput> run(const sched::LoweredProgram& program, const exec::RunOptions& options) override {
    if (options.iterations < 1) return usage_error(fmt::format("--iterations must be >= 1 (got {})", options.iterations));
    SimOptions sim_options;
    sim_options.allow_tf32 = options.allow_tf32;
    sim_options.comm_sms = options.comm_sms;
    sim_options.module = program.module;
    int iterations = options.iterations;
    if (options.progress) {
      // One simulated iteration is the whole work; repeats are copies.
      sim_options.progress = options.progress;
    }
    SL_ASSIGN_OR_RETURN(trace::Trace trace, simulate(program.devices, model_, sim_options));
    if (measured_) {
      SL_ASSIGN_OR_RETURN(trace, trace_driven(program, sim_options, trace));
    }
    trace.normalize_time();
    if (iterations > 1) {
      // Repeats are laid end to end: the last must still end within int64 ns.
      int64_t total = 0;
      if (__builtin_mul_overflow(trace.makespan_ns(), static_cast<int64_t>(iterations), &total)) {
        return invalid_input(fmt::format("{} iterations of a {} ns makespan pass int64 nanoseconds (292 years)",
                                         iterations, trace.makespan_ns()));
      }
      repeat(trace, iterations);
    }

    exec::RunOutput out;
    out.trace = std::move(trace);
    out.device_description = fmt::format("{} model ({}) x{}", model_.name, model_.description, program.devices.size());
    return out;
  }

 private:
  // Iteration i starts when iteration i-1 has ended on every device.
  static void repeat(trace::Trace& trace, int iterations) {
    const size_t events = trace.events.size();
    const size_t deps = trace.dependencies.size();
    const int64_t span = trace.makespan_ns();
    trace.events.reserve(events * static_cast<size_t>(iterations));
    trace.dependencies.reserve(deps * static_cast<size_t>(iterations));
    for (int it = 1; it < iterations; ++it) {
      const auto offset = static_cast<uint32_t>(events * static_cast<size_t>(it));
      for (size_t i = 0; i < events; ++i) {
        trace::Event e = trace.events[i];
        e.start_ns += span * it;
        e.end_ns += span * it;
        e.iteration = it;
        trace.events.push_back(e);
      }
      for (size_t i = 0; i < deps; ++i) {
        trace::Dependency d = trace.dependencies[i];
        trace.dependencies.push_back({d.from + offset, d.to + offset});
      }
    }
  }

  // Simulates again with each thunk's measured time (the model's, scaled by
  // its bias on this program, for the rest) and the launch gap the measured
  // run paid.
  Result<trace::Trace> trace_driven(const sched::LoweredProgram& program, SimOptions options,
                                    const trace::Trace& modelled) const {
    ThunkTimes times = thunk_times(program.devices, *measured_, modelled);
    DeviceModel replay = model_;
    if (measured_->launch_gap_ns > 0) replay.kernel_launch_us = static_cast<double>(measured_->launch_gap_ns) / 1e3;
    options.fixed_thunk_ns = &times.ns;
    options.fixed_thunk_gap_ns = &times.gap_ns;
    SL_ASSIGN_OR_RETURN(trace::Trace trace, simulate(program.devices, replay, options));
    trace.add_counter("trace_driven.matched_thunks", times.matched_thunks,
                      "thunks costed by what their instruction took in the measured run's median step");
    trace.add_counter("trace_driven.modelled_thunks", times.modelled_thunks,
                      "thunks the measured run never ran, costed by the model times its bias");
    trace.add_counter("trace_driven.model_bias_permille", std::llround(times.model_bias * 1000),
                      "median of measured / modelled kernel time over the matched thunks, x1000");
    trace.add_counter("trace_driven.launch_gap_ns", measured_->launch_gap_ns,
                      "median idle time between records of a stream in the measured steps, used as the launch gap");
    return trace;
  }

  DeviceModel model_;
  std::optional<MeasuredTimes> measured_;
};

}  // namespace

std::unique_ptr<exec::Backend> make_sim_backend(DeviceModel model) {
  return std::make_unique<SimBackend>(std::move(model));
}

std::unique_ptr<exec::Backend> make_trace_driven_sim_backend(DeviceModel model, MeasuredTimes measured) {
  return std::make_unique<SimBackend>(std::move(model), std::move(measured));
}

}  // namespace sl::sim
