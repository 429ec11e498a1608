#pragma once
// Shared fit math of calibration (sim/calibrate.h): medians, least-squares
// lines, the one weighted mean every averaging fit uses, the log of fitted
// numbers, and the fits themselves, each taking the model fitted so far.
// Internal to sl_sim.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/calibrate.h"
#include "sim/calibrate_samples.h"
#include "sim/device_model.h"

namespace sl::sim::calibrate_internal {

using GemmShape = std::tuple<int64_t, int64_t, int64_t, int64_t, int>;  // m, n, k, batch, type
GemmShape shape_of(const sched::Thunk& t);

// The median; `v` must not be empty.
double median(std::vector<double> v);

// SMs a GEMM sample ran on (0: all), as the cost model sees them.
int64_t sms_of(const DeviceModel& model, const Sample& s);

double hbm_bytes_per_ns(const DeviceModel& model);

// Bucket of `v` in a GEMM efficiency table's edges.
size_t bucket(const std::vector<int64_t>& edges, int64_t v);

double gemm_flops(const Sample& s);

// Least squares y = a + b x. False when x does not vary.
bool fit_line(const std::vector<std::pair<double, double>>& points, double* a, double* b);

std::string today_utc();

// A mean of values weighted by how much of the measurement each stands for:
// every fit that averages goes through it. `count` events stand behind
// each value; `detail` says where it came from, for people.
struct WeightedMean {
  double weighted = 0, weight = 0;
  int64_t n = 0;
  std::string detail;
  void add(double value, double w, int64_t count = 1, std::string_view from = {}) {
    weighted += value * w;
    weight += w;
    n += count;
    if (!from.empty()) detail += (detail.empty() ? "" : "; ") + std::string(from);
  }
  double value() const { return weighted / weight; }
};

// What every fit reads: the model calibration started from and the samples.
struct FitInputs {
  const DeviceModel& base;
  const std::vector<Sample>& samples;
};

// What the fits write: each fitted number with its source, and notes on
// what could not be fitted and why.
class FitLog {
 public:
  FitLog(Calibration& out, std::string provenance) : out_(out), provenance_(std::move(provenance)) {}

  // A fitted number and its source, "<provenance>: <detail>".
  void record(const std::string& key, double before, double after, int64_t samples, std::string detail);
  // The two halves of record, for numbers fitted together under one source.
  void add_fitted(const std::string& key, double before, double after, int64_t samples, std::string detail);
  void set_source(const std::string& key, const std::string& detail);
  void note(std::string text) { out_.notes.push_back(std::move(text)); }
  // *field (us) = the median of `values_ns`, when there are at least 5.
  void fit_median_us(const std::string& key, std::vector<double> values_ns, const std::string& what, double* field);
  // *field = `mean`, recorded as `key`; without samples, the note `none`.
  void fit_mean(const std::string& key, const WeightedMean& mean, const std::string& none, std::string detail,
                double* field);

 private:
  Calibration& out_;
  std::string provenance_;
};

// Per GEMM shape, the median duration of its samples that ran alone on
// every SM: what a GEMM beside a collective is measured against.
std::map<GemmShape, double> median_alone_gemm_ns(const FitInputs& in, const DeviceModel& model);

// A kernel's launch: in the cost model's standalone time, before the event.
inline double launch_ns(const DeviceModel& model) { return model.kernel_launch_us * 1e3; }

// A collective's rate while overlapped for `t` of its measured duration d,
// against the fitted model's time alone w: w = (d - t) + t * rate. Absent
// for a local copy, which has no rate to fit.
std::optional<double> rate_while_overlapped(const DeviceModel& model, const Sample& s, double t);

// The fits, in the order the driver runs them. Each reads `model`, the
// model fitted so far, and updates the numbers it fits in it.
void fit_launch_gap(const FitInputs& in, DeviceModel& model, FitLog& log);        // calibrate_kernels.cc
void fit_memory_bandwidth(const FitInputs& in, DeviceModel& model, FitLog& log);
void fit_copy_bandwidth(const FitInputs& in, DeviceModel& model, FitLog& log);
void fit_min_kernel(const FitInputs& in, DeviceModel& model, FitLog& log);
void fit_gemm_efficiency(const FitInputs& in, DeviceModel& model, FitLog& log);   // calibrate_gemms.cc
void fit_sm_limited_gemms(const FitInputs& in, DeviceModel& model, FitLog& log);
void fit_collectives(const FitInputs& in, DeviceModel& model, FitLog& log);       // calibrate_collectives.cc
void fit_contention(const FitInputs& in, DeviceModel& model, FitLog& log);        // calibrate_overlap.cc
void fit_comm_beside_confined_gemms(const FitInputs& in, DeviceModel& model, FitLog& log);
void fit_comm_under_compute(const FitInputs& in, DeviceModel& model, FitLog& log);
void fit_concurrency(const FitInputs& in, DeviceModel& model, FitLog& log);

}  // namespace sl::sim::calibrate_internal
