#include "app/cli/kernel_times.h"

#include <fmt/format.h>

#include "app/cli/linked_report.h"
#include "app/cli/run_ref.h"
#include "core/trace/store/trace_store.h"
#include "sim/device_model.h"
#include "sim/sim_backend.h"

namespace sl::cli {

Result<sim::MeasuredTimes> measured_kernel_times(const std::string& db, const std::string& run, int64_t* run_id) {
  SL_ASSIGN_OR_RETURN(auto store, trace::TraceStore::open(db, trace::TraceStore::Mode::kReadOnly));
  SL_ASSIGN_OR_RETURN(StoredRun measured_run, load_stored_run(*store, run));
  if (run_id != nullptr) *run_id = measured_run.id;
  if (!is_linked_run(measured_run.info)) {
    return invalid_input(fmt::format("--kernel-times {}: run {} has no steps: link it to its XLA module first "
                                     "(streamlens link RUN MODULE.txt, or capture --xla-dump)",
                                     run, measured_run.id));
  }
  auto measured = sim::measured_times(measured_run.trace);
  if (!measured) return invalid_input(fmt::format("--kernel-times {}: {}", run, measured.status().message()));
  return measured;
}

Result<TraceDrivenBackend> trace_driven_backend(const std::string& db, const std::string& run,
                                                const std::string& device) {
  int64_t run_id = 0;
  SL_ASSIGN_OR_RETURN(sim::MeasuredTimes measured, measured_kernel_times(db, run, &run_id));
  SL_ASSIGN_OR_RETURN(sim::DeviceModel model, sim::load_device_model(device));
  TraceDrivenBackend out;
  out.description = fmt::format("{} + kernel times of run {} ({} steps)", device, run_id, measured.steps);
  out.backend = sim::make_trace_driven_sim_backend(std::move(model), std::move(measured));
  return out;
}

}  // namespace sl::cli
