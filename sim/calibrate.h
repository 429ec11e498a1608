#pragma once
// Calibration (docs/simulator.md, `streamlens calibrate`): fits the numbers of a
// DeviceModel to measured runs, through the cost model's own formulas
// (sim/cost_model.h), so the simulator reproduces what was measured.
//
// What is fitted, from events that ran alone unless said otherwise:
// - kernel_launch_us: the median gap between back-to-back kernels on one
//   stream (the simulator puts a kernel's launch before its event);
// - min_kernel_us: the median duration of kernels that do next to nothing;
// - gemm_efficiency.values, per (m, n, k) bucket that has samples: achieved
//   FLOP/s over peak, with wave quantization and launch taken out;
// - hbm_efficiency: bytes / time of memory-bound non-GEMM kernels, their
//   flops and bytes as the simulator costs them (sim/kernel_content.h: by
//   content in the run's module, a fusion's slice of an operand, not all of it);
// - nccl_bus_bandwidth_gbps / p2p_bandwidth_gbps and nccl_launch_us: a
//   least-squares line duration = a + bytes / algbw per (collective kind,
//   group size), algbw turned into bus bandwidth with the factors the cost
//   model uses; the intercept minus NCCL's protocol latency is the launch;
// - contention_factor: GEMMs on every SM that overlapped a collective against
//   the same GEMM alone (measured, or predicted by the fitted model);
// - sm_limited_gemm_scale: GEMMs confined to fewer SMs beside a collective
//   (CalibrationRun::comm_sms) against the same GEMM alone on every SM; per
//   shape, those that started before their collective when there are any;
// - comm_rate_beside_confined_gemm, per ring kind: collectives beside such
//   GEMMs for most of their time against the fitted collective model;
// - comm_rate_under_compute: collectives beside compute kernels on every SM
//   (permutes beside GEMMs) for most of their time, likewise;
// - gemm_wave_overhead_us: with the efficiency table, from GEMMs alone whose
//   waves do not follow their work.
// Buckets and numbers without samples keep the base model's values.

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/sched/lowering.h"
#include "core/trace/trace.h"
#include "sim/device_model.h"
#include "sim/device_model_json.h"

namespace sl::sim {

// One measured run. Events are matched to the lowered program's thunks by
// (device, instruction, kind) in time order, which gives GEMM dims, collective
// groups and byte counts. Both pointers must outlive the calibrate() call.
struct CalibrationRun {
  int64_t run_id = 0;                              // named in the sources
  const trace::Trace* trace = nullptr;
  const sched::LoweredProgram* program = nullptr;
  bool allow_tf32 = false;                         // f32 GEMMs ran at the TF32 rate
  int comm_sms = 0;  // SMs its GEMMs beside a collective left free (config "comm_sms"; absent in older runs: 0)
};

struct FittedNumber {
  std::string key;      // path as in DeviceSources, e.g. "gemm_efficiency.values[2][2][2]"
  double before = 0;
  double after = 0;
  int64_t samples = 0;  // events that went into it
  std::string detail;   // how it was computed, for people
};

struct Calibration {
  DeviceModel model;
  std::vector<FittedNumber> fitted;
  DeviceSources sources;       // base file's sources with the fitted ones replaced
  std::vector<std::string> notes;  // skipped samples and why
};

struct CalibrateOptions {
  std::string date;  // written into the sources; empty: today (UTC)
};

Result<Calibration> calibrate_detailed(const DeviceModel& base, const std::vector<CalibrationRun>& runs,
                                       const CalibrateOptions& options = {});

// The fitted model alone. kInvalidInput when no event could be used.
Result<DeviceModel> calibrate(const DeviceModel& base, const std::vector<CalibrationRun>& runs);

}  // namespace sl::sim
