// Kernel and copy fits: the launch gap, the shortest kernel, HBM efficiency
// and the copy paths' bandwidth scales.

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

// kernel_launch_us from the gaps between back-to-back launches on one stream:
// the next kernel (or GEMM) starts that long after the previous one ends when
// the GPU, not the host, is behind. Gaps over 50 us (host-bound stretches,
// iteration boundaries) say nothing about the launch; the median shrugs off
// the few waits for another stream in between.
void fit_launch_gap(const FitInputs& in, DeviceModel& model, FitLog& log) {
  using Track = std::tuple<const CalibrationRun*, int32_t, int32_t>;
  std::map<Track, std::vector<const Sample*>> tracks;
  for (const Sample& s : in.samples) {
    if (s.thunk->kind != ThunkKind::kCollective) tracks[{s.run, s.device, s.stream}].push_back(&s);
  }
  std::vector<double> gaps;
  for (auto& [track, samples] : tracks) {
    std::sort(samples.begin(), samples.end(), [](const Sample* a, const Sample* b) { return a->start_ns < b->start_ns; });
    for (size_t i = 1; i < samples.size(); ++i) {
      const double gap = static_cast<double>(samples[i]->start_ns - samples[i - 1]->end_ns);
      if (gap >= 0 && gap <= 50e3) gaps.push_back(gap);
    }
  }
  log.fit_median_us("kernel_launch_us", std::move(gaps), "gaps between back-to-back kernels on one stream",
                &model.kernel_launch_us);
}

namespace {

// A kernel the simulator costs as a GEMM (a fusion holding a dot, a
// convolution): the GEMM fits speak for it, not the kernel fits.
bool gemm_content(const Sample& s) {
  return s.work.work_class == WorkClass::kGemm || s.work.work_class == WorkClass::kConvolution;
}

// The model's busy time of a non-GEMM kernel, before min_kernel_us.
double kernel_busy_ns(const DeviceModel& m, const Sample& s) {
  const ContentTimes t = content_times(m, s.work);
  return std::max(t.compute_ns, t.memory_ns);
}

}  // namespace

// Kernels that do next to nothing (the model's time under 0.2 us) take as
// long as a kernel takes at least: min_kernel_us is their median duration.
void fit_min_kernel(const FitInputs& in, DeviceModel& model, FitLog& log) {
  std::vector<double> durations;
  for (const Sample& s : in.samples) {
    if (s.thunk->kind == ThunkKind::kKernel && !gemm_content(s) && kernel_busy_ns(model, s) < 200) {
      durations.push_back(s.duration_ns);
    }
  }
  log.fit_median_us("min_kernel_us", std::move(durations), "durations of kernels the model gives under 0.2 us of work",
                &model.min_kernel_us);
}

namespace {

// Whether a sample is a kernel that streams memory alone on `path`: memory
// bound under the base model's rates (compute-bound kernels say nothing about
// HBM) and long enough to stream (a few microseconds measure start-up).
bool streams_alone(const DeviceModel& base, const Sample& s, CopyPath path) {
  if (s.thunk->kind != ThunkKind::kKernel || gemm_content(s) || !alone(s) || s.work.bytes() <= 0 ||
      s.duration_ns <= 0) {
    return false;
  }
  if (copy_path(*s.thunk) != path) return false;
  const ContentTimes t = content_times(base, s.work);
  return t.compute_ns <= t.memory_ns && t.memory_ns >= 5e3;
}

}  // namespace

void fit_memory_bandwidth(const FitInputs& in, DeviceModel& model, FitLog& log) {
  double bytes = 0, busy = 0;
  int64_t n = 0;
  for (const Sample& s : in.samples) {
    if (!streams_alone(in.base, s, CopyPath::kNone)) continue;
    bytes += s.work.bytes();
    busy += s.duration_ns;  // the launch is the gap before the kernel, not in it
    ++n;
  }
  if (n == 0 || busy <= 0) {
    log.note("hbm_efficiency: no memory-bound kernel ran alone; kept the base value");
    return;
  }
  double achieved = bytes / busy;  // GB/s
  double eff = achieved / model.hbm_bandwidth_gbps;
  if (eff > 1) {
    log.note(fmt::format("hbm_efficiency: kernels reached {:.0f} GB/s, above the {:.0f} GB/s peak; "
                                     "capped at 1", achieved, model.hbm_bandwidth_gbps));
    eff = 1;
  }
  log.record("hbm_efficiency", model.hbm_efficiency, eff, n,
         fmt::format("{} memory-bound kernels alone moved {:.0f} bytes in {:.0f} ns: {:.0f} GB/s of {:.0f}", n, bytes,
                     busy, achieved, model.hbm_bandwidth_gbps));
  model.hbm_efficiency = eff;
}

// copy_engine_bandwidth_scale and copy_kernel_bandwidth_scale: what the
// copies of each path moved alone, over the fitted elementwise rate.
void fit_copy_bandwidth(const FitInputs& in, DeviceModel& model, FitLog& log) {
  const std::pair<CopyPath, const char*> paths[] = {{CopyPath::kCopyEngine, "copy_engine_bandwidth_scale"},
                                                    {CopyPath::kCopyKernel, "copy_kernel_bandwidth_scale"}};
  for (const auto& [path, key] : paths) {
    double bytes = 0, busy = 0;
    int64_t n = 0;
    for (const Sample& s : in.samples) {
      if (!streams_alone(in.base, s, path)) continue;
      bytes += s.work.bytes();
      busy += s.duration_ns;
      ++n;
    }
    double* field = path == CopyPath::kCopyEngine ? &model.copy_engine_bandwidth_scale
                                                  : &model.copy_kernel_bandwidth_scale;
    if (n == 0 || busy <= 0) {
      log.note(fmt::format("{}: no such copy streamed alone; kept the base value", key));
      continue;
    }
    const double achieved = bytes / busy;  // GB/s
    const double scale = achieved / hbm_bytes_per_ns(model);
    log.record(key, *field, scale, n,
           fmt::format("{} copies alone moved {:.0f} bytes in {:.0f} ns: {:.0f} GB/s, over the elementwise {:.0f} GB/s",
                       n, bytes, busy, achieved, hbm_bytes_per_ns(model)));
    *field = scale;
  }
}

}  // namespace sl::sim::calibrate_internal
