// The calibration driver: collects the samples of every run, then runs the
// fits in order, each on the model the previous ones fitted.

#include "sim/calibrate.h"

#include <fmt/format.h>

#include "sim/calibrate_fit.h"
#include "sim/calibrate_samples.h"

namespace sl::sim {

Result<Calibration> calibrate_detailed(const DeviceModel& base, const std::vector<CalibrationRun>& runs,
                                       const CalibrateOptions& options) {
  using namespace calibrate_internal;
  if (runs.empty()) return invalid_input("calibrate: no runs given");
  std::vector<Sample> samples;
  std::vector<std::string> notes;
  std::string ids;
  for (const CalibrationRun& run : runs) {
    if (!run.trace || !run.program) return invalid_input(fmt::format("calibrate: run {} has no trace or program", run.run_id));
    collect_samples(run, &samples, &notes);
    ids += (ids.empty() ? "" : ",") + std::to_string(run.run_id);
  }
  if (samples.empty()) {
    return invalid_input(fmt::format("calibrate: no event of runs {} matches an instruction of its program", ids));
  }
  std::string date = options.date.empty() ? today_utc() : options.date;
  Calibration out;
  out.sources = read_device_sources(base.file);
  out.notes = std::move(notes);
  FitLog log(out, fmt::format("calibrated from runs {} on {}", ids, date));
  const FitInputs in{base, samples};
  DeviceModel model = base;
  // Order matters: GEMMs use the fitted HBM rate, contention the fitted table.
  fit_launch_gap(in, model, log);
  fit_memory_bandwidth(in, model, log);
  fit_copy_bandwidth(in, model, log);
  fit_min_kernel(in, model, log);
  fit_gemm_efficiency(in, model, log);
  fit_collectives(in, model, log);
  fit_contention(in, model, log);
  fit_comm_beside_confined_gemms(in, model, log);
  fit_comm_under_compute(in, model, log);
  fit_sm_limited_gemms(in, model, log);
  fit_concurrency(in, model, log);
  if (out.fitted.empty()) {
    return invalid_input(fmt::format("calibrate: runs {} hold no event that fits any number (need GEMMs, "
                                     "memory-bound kernels or collectives that ran alone)", ids));
  }
  model.file.clear();
  out.model = std::move(model);
  return out;
}

Result<DeviceModel> calibrate(const DeviceModel& base, const std::vector<CalibrationRun>& runs) {
  SL_ASSIGN_OR_RETURN(Calibration c, calibrate_detailed(base, runs));
  return std::move(c.model);
}

}  // namespace sl::sim
