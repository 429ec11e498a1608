// GEMM fits: the efficiency table with the per-wave overhead, and GEMMs
// confined to fewer SMs beside a collective.

#include "sim/calibrate_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "sim/cost_model.h"

namespace sl::sim::calibrate_internal {
namespace {

using sched::Thunk;
using sched::ThunkKind;
using trace::EventKind;

}  // namespace

// gemm_efficiency.values per bucket and gemm_wave_overhead_us, jointly:
// busy = ideal / efficiency + waves * overhead, where ideal is the time at
// the peak with wave quantization; least squares in relative error. The
// overhead is fitted only when the GEMMs' waves do not follow their ideal
// time within every bucket (else it cannot be told from the efficiency).
void fit_gemm_efficiency(const FitInputs& in, DeviceModel& model, FitLog& log) {
  GemmEfficiencyTable& table = model.gemm_efficiency;
  if (table.values.empty()) {
    log.note("gemm_efficiency: the base model has no table");
    return;
  }
  struct Point {
    double ideal_ns, waves, busy_ns;
  };
  using Bucket = std::tuple<size_t, size_t, size_t>;
  std::map<Bucket, std::vector<Point>> buckets;
  for (const Sample& s : in.samples) {
    if (s.thunk->kind != ThunkKind::kGemm || !alone(s) || sms_of(model, s) > 0) continue;
    const sched::GemmDims& d = s.thunk->gemm;
    double peak = gemm_peak_flops(model, d.type, s.run->allow_tf32 || d.tf32);
    double quantization = gemm_efficiency(model, d) / table.lookup(d.m, d.n, d.k);
    // The launch is the gap before the kernel; the call's fixed cost is no
    // part of the product the table rates.
    double busy = s.duration_ns - library_call_ns(model, *s.thunk);
    double memory_ns = static_cast<double>(s.thunk->bytes_accessed) / hbm_bytes_per_ns(model);
    if (peak <= 0 || busy <= 0 || memory_ns >= 0.9 * busy) continue;  // memory bound: no compute information
    buckets[{bucket(table.m_edges, d.m), bucket(table.n_edges, d.n), bucket(table.k_edges, d.k)}].push_back(
        {gemm_flops(s) / (peak * quantization) * 1e9, static_cast<double>(gemm_waves(model, d)), busy});
  }
  if (buckets.empty()) {
    log.note("gemm_efficiency: no compute-bound GEMM ran alone; kept the base table");
    return;
  }
  // Weights 1/busy^2. Per bucket, for a given overhead o the best 1/efficiency
  // is c - o * d; what is left is linear in o.
  struct Line {
    double c = 0, d = 0;
  };
  std::map<Bucket, Line> lines;
  for (const auto& [b, points] : buckets) {
    double saa = 0, say = 0, saw = 0;
    for (const Point& p : points) {
      const double w = 1 / (p.busy_ns * p.busy_ns);
      saa += w * p.ideal_ns * p.ideal_ns;
      say += w * p.ideal_ns * p.busy_ns;
      saw += w * p.ideal_ns * p.waves;
    }
    lines[b] = {say / saa, saw / saa};
  }
  double spq = 0, sqq = 0, sww = 0;
  for (const auto& [b, points] : buckets) {
    const Line& l = lines[b];
    for (const Point& p : points) {
      const double w = 1 / (p.busy_ns * p.busy_ns);
      const double rest = p.busy_ns - p.ideal_ns * l.c, q = p.waves - p.ideal_ns * l.d;
      spq += w * rest * q;
      sqq += w * q * q;
      sww += w * p.waves * p.waves;
    }
  }
  double overhead_ns = model.gemm_wave_overhead_us * 1e3;
  if (sqq > 1e-6 * sww) {
    overhead_ns = std::max(0.0, spq / sqq);
    int64_t n = 0;
    for (const auto& [b, points] : buckets) n += static_cast<int64_t>(points.size());
    log.record("gemm_wave_overhead_us", model.gemm_wave_overhead_us, overhead_ns / 1e3, n,
           fmt::format("least squares with the efficiency of each bucket over {} GEMMs that ran alone: busy = time "
                       "at the peak (wave quantization in) / efficiency + waves x overhead", n));
    model.gemm_wave_overhead_us = overhead_ns / 1e3;
  } else {
    log.note("gemm_wave_overhead_us: the GEMMs alone had the same waves for their work in every bucket; "
                         "kept the base value");
  }

  std::vector<std::string> parts;
  int64_t total = 0;
  for (const auto& [b, points] : buckets) {
    auto [im, in, ik] = b;
    const Line& l = lines[b];
    const double inverse = l.c - overhead_ns * l.d;
    const double eff = inverse > 0 ? std::min(1.0, 1 / inverse) : 1.0;
    const int64_t n = static_cast<int64_t>(points.size());
    double& cell = table.values[im][in][ik];
    std::string key = fmt::format("gemm_efficiency.values[{}][{}][{}]", im, in, ik);
    log.add_fitted(key, cell, eff, n,
                   fmt::format("{} GEMMs alone reached {:.4f} of peak before wave quantization and the waves' "
                               "overhead", n, eff));
    parts.push_back(fmt::format("[{}][{}][{}] = {:.4f} from {} GEMMs", im, in, ik, eff, n));
    cell = eff;
    total += n;
  }
  std::string joined;
  for (const std::string& p : parts) joined += (joined.empty() ? "" : "; ") + p;
  std::string kept = model.file.empty() ? std::string() : fmt::format("; other buckets kept from {}", model.file);
  log.set_source("gemm_efficiency.values",
                 fmt::format("achieved FLOP/s over peak of {} GEMMs that ran alone, wave quantization, the waves' "
                             "overhead and launch taken out: {}{}", total, joined, kept));
}

// sm_limited_gemm_scale from GEMMs confined to fewer SMs beside a collective
// (that ran beside no other kernel): the cost model's time for them at scale 1
// over the measured one. The time at scale 1 is the same GEMM's on every SM
// (measured alone, else the fitted table) times the model's ratio of the two.
// The collective shares only HBM with them, which GEMMs hardly use.
//
// Which kernel reached the SMs first matters: on 2 H200s a confined GEMM that
// started while its collective already ran took 10-38% longer (1016 against
// 921 us for 4096x8192x8192; the kernel NCCL launched first presumably leaves
// fewer whole GPCs to the GEMM's clusters), one that started first did not.
// In five measurements of the fidelity programs the first GEMM beside a
// collective started first in 390 of 400 device-iterations, and the
// simulator models that case: per shape, only such samples count, when there
// are any.
void fit_sm_limited_gemms(const FitInputs& in, DeviceModel& model, FitLog& log) {
  const std::map<GemmShape, double> alone_ns = median_alone_gemm_ns(in, model);
  DeviceModel unscaled = model;
  unscaled.sm_limited_gemm_scale = 1;
  // Per shape and SM count, the median measured time of those that started
  // first (the median iteration is what is scored).
  struct Shape {
    double predicted = 0;
    std::vector<double> measured, measured_first;  // all; those that reached the SMs before the collective
  };
  std::map<std::pair<GemmShape, int64_t>, Shape> shapes;
  int64_t n = 0, measured_alone = 0;
  for (const Sample& s : in.samples) {
    const int64_t sms = s.thunk->kind == ThunkKind::kGemm ? sms_of(model, s) : 0;
    if (sms == 0 || s.kernel_overlap_ns > 0) continue;
    Shape& shape = shapes[{shape_of(*s.thunk), sms}];
    // The scale is the product's: the call's fixed cost stays out of both sides.
    const double call = library_call_ns(model, *s.thunk);
    const double fixed = launch_ns(model) + call;
    if (shape.measured.empty()) {
      shape.predicted = gemm_cost(unscaled, *s.thunk, s.run->allow_tf32, sms).work_ns - fixed;
      if (auto it = alone_ns.find(shape_of(*s.thunk)); it != alone_ns.end()) {
        shape.predicted *= (it->second - call) / (gemm_cost(unscaled, *s.thunk, s.run->allow_tf32).work_ns - fixed);
      }
    }
    if (alone_ns.count(shape_of(*s.thunk))) ++measured_alone;
    shape.measured.push_back(s.duration_ns - call);
    if (!s.started_inside_collective) shape.measured_first.push_back(s.duration_ns - call);
    ++n;
  }
  double predicted_sum = 0, measured_sum = 0;
  int64_t first = 0;
  for (auto& [key, shape] : shapes) {
    std::vector<double>& used = shape.measured_first.empty() ? shape.measured : shape.measured_first;
    if (!shape.measured_first.empty()) first += static_cast<int64_t>(used.size());
    const double count = static_cast<double>(used.size());
    predicted_sum += count * shape.predicted;
    measured_sum += count * median(std::move(used));
  }
  if (n == 0 || measured_sum <= 0) {
    log.note("sm_limited_gemm_scale: no GEMM ran on fewer SMs beside a collective; kept the base value");
    return;
  }
  const double scale = predicted_sum / measured_sum;
  log.record("sm_limited_gemm_scale", model.sm_limited_gemm_scale, scale, n,
         fmt::format(
             "{} GEMMs on fewer SMs beside a collective ({} of them of shapes measured alone on every SM; "
             "{} started before their collective and stood for their shape): the model's time on that many "
             "SMs over the median measured one per shape",
             n, measured_alone, first));
  model.sm_limited_gemm_scale = scale;
}

}  // namespace sl::sim::calibrate_internal
