// Overlap fits: how compute and collectives slow each other (contention
// factor, collective rates beside GEMMs) and two GEMMs on two streams.

#include "sim/calibrate_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <optional>

#include <fmt/format.h>

#include "sim/cost_model.h"

namespace sl::sim::calibrate_internal {
namespace {

using sched::Thunk;
using sched::ThunkKind;
using trace::EventKind;

}  // namespace

void fit_contention(const FitInputs& in, DeviceModel& model, FitLog& log) {
  if (model.sm_count <= 0 || model.nccl_channels <= 0) return;
  const double sm_share = static_cast<double>(model.nccl_channels) / model.sm_count;
  const std::map<GemmShape, double> alone_ns = median_alone_gemm_ns(in, model);
  WeightedMean mean;
  int64_t measured = 0, unslowed = 0;
  for (const Sample& s : in.samples) {
    if (s.thunk->kind != ThunkKind::kGemm || s.kernel_overlap_ns > 0 || sms_of(model, s) > 0) continue;
    double t_o = s.collective_overlap_ns;
    if (t_o < 0.2 * s.duration_ns) continue;
    KernelCost cost = gemm_cost(model, *s.thunk, s.run->allow_tf32);
    double work = cost.work_ns - launch_ns(model);
    if (auto it = alone_ns.find(shape_of(*s.thunk)); it != alone_ns.end()) {
      work = it->second;
      ++measured;
    }
    // work = (d - t_o) + t_o * rate, with rate = capacity / compute_need while slowed.
    double rate = (work - (s.duration_ns - t_o)) / t_o;
    if (rate >= 1 || rate <= 0 || cost.compute_need <= 0) {
      ++unslowed;
      continue;
    }
    double capacity = rate * cost.compute_need;
    mean.add((1 - capacity) / sm_share, t_o);
  }
  log.fit_mean("contention_factor", mean,
           unslowed > 0 ? fmt::format("contention_factor: {} GEMMs beside a collective were not slower than alone; "
                                      "kept the base value", unslowed)
                        : "contention_factor: no GEMM overlapped a collective; kept the base value",
           fmt::format("{} GEMMs beside a collective against the same GEMM alone ({} measured alone, {} predicted by "
                       "the fitted table): kept 1 - {}/{} x f of the compute", mean.n, measured, mean.n - measured,
                       model.nccl_channels, model.sm_count),
           &model.contention_factor);
}

// comm_rate_beside_confined_gemm from collectives that ran beside GEMMs
// confined to fewer SMs (and beside no other kernel) for most of their time:
// their rate while overlapped (rate_while_overlapped).
// Each ring kind gets the mean of its own samples; kinds without any, and
// permutes, the mean of all.
void fit_comm_beside_confined_gemms(const FitInputs& in, DeviceModel& model, FitLog& log) {
  WeightedMean mean;
  std::map<hlo::Opcode, WeightedMean> by_kind;
  for (const Sample& s : in.samples) {
    if (s.thunk->kind != ThunkKind::kCollective) continue;
    const double t = s.confined_overlap_ns;
    // Mostly overlapped: the rate is read off the overlapped part, where a
    // small error in the time alone would be multiplied by d / t otherwise.
    if (t < 0.5 * s.duration_ns || s.kernel_overlap_ns > 1.01 * t + 10) continue;
    const std::optional<double> rate = rate_while_overlapped(model, s, t);
    if (!rate) continue;
    mean.add(*rate, t);
    by_kind[s.thunk->collective.op].add(*rate, t);
  }
  const std::string how = "against the fitted collective model's time alone: their rate while overlapped, weighted by "
                          "the overlap";
  log.fit_mean("comm_rate_beside_confined_gemm", mean,
           "comm_rate_beside_confined_gemm: no collective ran beside a GEMM confined to fewer SMs for most of its "
           "time; kept the base value",
           fmt::format("{} collectives beside GEMMs confined to fewer SMs {}", mean.n, how),
           &model.comm_rate_beside_confined_gemm);
  if (mean.n == 0) return;
  for (hlo::Opcode op : {hlo::Opcode::kAllGather, hlo::Opcode::kReduceScatter, hlo::Opcode::kAllReduce}) {
    double* field = rate_beside_confined_gemm(model, op);
    auto it = by_kind.find(op);
    if (it == by_kind.end()) {
      *field = model.comm_rate_beside_confined_gemm;
      continue;
    }
    log.fit_mean(rate_beside_confined_gemm_key(op), it->second, "",
             fmt::format("{} {}s beside GEMMs confined to fewer SMs {}", it->second.n, hlo::opcode_name(op), how),
             field);
  }
}

// comm_rate_under_compute from collectives that ran beside compute kernels
// on every SM (a permute beside a GEMM: only ring collectives confine them)
// for most of their time, as comm_rate_beside_confined_gemm is fitted. Such
// kernels are taken to fill the device, where the cost model's rate is
// comm_rate_under_compute itself.
void fit_comm_under_compute(const FitInputs& in, DeviceModel& model, FitLog& log) {
  WeightedMean mean;
  for (const Sample& s : in.samples) {
    if (s.thunk->kind != ThunkKind::kCollective || s.confined_overlap_ns > 0) continue;
    const double t = s.kernel_overlap_ns;
    if (t < 0.5 * s.duration_ns) continue;
    if (const std::optional<double> rate = rate_while_overlapped(model, s, t)) mean.add(*rate, t);
  }
  log.fit_mean("comm_rate_under_compute", mean,
           "comm_rate_under_compute: no collective ran beside compute kernels on every SM for most of its time; "
           "kept the base value",
           fmt::format("{} collectives beside compute kernels on every SM against the fitted collective model's time "
                       "alone: their rate while overlapped, weighted by the overlap", mean.n),
           &model.comm_rate_under_compute);
}

// concurrent_kernel_efficiency from pairs of GEMMs on two streams of one
// device (beside no collective) whose needs add up past the device, the
// second starting before the first ended. In the cost model the first runs
// at that efficiency while the second waits for its SMs, then the second
// runs alone: span = busy_first / efficiency + busy_second.
void fit_concurrency(const FitInputs& in, DeviceModel& model, FitLog& log) {
  WeightedMean mean;
  for (size_t i = 0; i < in.samples.size(); ++i) {
    const Sample& a = in.samples[i];
    if (a.thunk->kind != ThunkKind::kGemm || a.collective_overlap_ns > 0) continue;
    for (size_t j = i + 1; j < in.samples.size(); ++j) {
      const Sample& b = in.samples[j];
      if (b.thunk->kind != ThunkKind::kGemm || b.run != a.run || b.device != a.device || b.stream == a.stream ||
          b.collective_overlap_ns > 0) {
        continue;
      }
      const Sample& first = a.start_ns <= b.start_ns ? a : b;
      const Sample& second = a.start_ns <= b.start_ns ? b : a;
      if (second.start_ns > first.end_ns) continue;  // one after the other
      KernelCost c1 = gemm_cost(model, *first.thunk, first.run->allow_tf32, sms_of(model, first));
      KernelCost c2 = gemm_cost(model, *second.thunk, second.run->allow_tf32, sms_of(model, second));
      if (c1.compute_need + c2.compute_need <= 1) continue;  // the pair fits the device: nothing to learn
      const double span = static_cast<double>(std::max(first.end_ns, second.end_ns) - first.start_ns);
      const double rest = span - (c2.work_ns - launch_ns(model));
      if (rest <= 0) continue;
      const double efficiency = std::clamp((c1.work_ns - launch_ns(model)) / rest, 0.05, 1.0);
      mean.add(efficiency, span);
    }
  }
  log.fit_mean("concurrent_kernel_efficiency", mean,
           "concurrent_kernel_efficiency: no two GEMMs on two streams met on one device; kept the base value",
           fmt::format("{} pairs of GEMMs on two streams, the second started before the first ended: the first's "
                       "work alone (fitted model) over the pair's span less the second's work", mean.n),
           &model.concurrent_kernel_efficiency);
}

}  // namespace sl::sim::calibrate_internal
