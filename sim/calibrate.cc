#include "sim/calibrate.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "sim/cost_model.h"

namespace sl::sim {
namespace {

using sched::Thunk;
using sched::ThunkKind;
using trace::EventKind;

// An event matched to the thunk it ran, with its overlaps on its device.
struct Sample {
  const Thunk* thunk = nullptr;
  const CalibrationRun* run = nullptr;
  double duration_ns = 0;
  double collective_overlap_ns = 0;  // time a collective ran beside it
  double kernel_overlap_ns = 0;      // time a compute kernel on another stream ran beside it
  double confined_overlap_ns = 0;    // of that, time GEMMs confined to fewer SMs ran beside it
  bool started_inside_collective = false;  // a kernel that began while a collective of its device ran
  int32_t device = 0;
  int32_t stream = 0;
  int64_t start_ns = 0, end_ns = 0;
};

struct Interval {
  int64_t start, end;
};

// Union of intervals, sorted and merged.
std::vector<Interval> merge(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

double overlap(const std::vector<Interval>& merged, int64_t start, int64_t end) {
  auto it = std::lower_bound(merged.begin(), merged.end(), start,
                             [](const Interval& i, int64_t s) { return i.end <= s; });
  double total = 0;
  for (; it != merged.end() && it->start < end; ++it) {
    total += static_cast<double>(std::min(end, it->end) - std::max(start, it->start));
  }
  return total;
}

bool is_compute_kernel(EventKind kind) {
  return kind != EventKind::kCollective && kind != EventKind::kWait && kind != EventKind::kMemset;
}

ThunkKind thunk_kind_for(EventKind kind) {
  if (kind == EventKind::kGemm) return ThunkKind::kGemm;
  if (kind == EventKind::kCollective) return ThunkKind::kCollective;
  return ThunkKind::kKernel;
}

// Matches one run's events to thunks and measures their overlaps.
void collect_samples(const CalibrationRun& run, std::vector<Sample>* out, std::vector<std::string>* notes) {
  const trace::Trace& tr = *run.trace;
  using Key = std::tuple<int64_t, std::string, ThunkKind>;
  std::map<Key, std::vector<const Thunk*>> thunks;
  for (const sched::DeviceProgram& dp : run.program->devices) {
    for (const Thunk& t : dp.thunks) {
      if (t.kind == ThunkKind::kRecordEvent || t.kind == ThunkKind::kWaitEvent) continue;
      std::string name(!t.attributed_name.empty() ? t.attributed_name
                                                  : t.instruction ? std::string_view(t.instruction->name) : "");
      thunks[Key{dp.device, name, t.kind}].push_back(&t);
    }
  }
  // GEMMs the run confined to fewer SMs (beside a collective, comm_sms > 0).
  std::set<std::pair<int64_t, std::string>> confined;  // (device, instruction)
  if (run.comm_sms > 0) {
    for (const sched::DeviceProgram& dp : run.program->devices) {
      for (const Thunk& t : dp.thunks) {
        if (t.kind == ThunkKind::kGemm && t.gemm.beside_collective) {
          confined.emplace(dp.device, !t.attributed_name.empty() ? t.attributed_name
                                      : t.instruction ? t.instruction->name : "");
        }
      }
    }
  }
  // Per device: collective union, per-stream unions of compute kernels, and
  // the union of confined GEMMs.
  std::map<int32_t, std::vector<Interval>> collectives, confined_gemms;
  std::map<int32_t, std::map<int32_t, std::vector<Interval>>> kernels;
  std::vector<size_t> order;
  for (size_t i = 0; i < tr.events.size(); ++i) {
    const trace::Event& e = tr.events[i];
    if (e.end_ns <= e.start_ns) continue;
    if (e.kind == EventKind::kCollective) collectives[e.device].push_back({e.start_ns, e.end_ns});
    if (is_compute_kernel(e.kind)) kernels[e.device][e.stream].push_back({e.start_ns, e.end_ns});
    if (e.kind == EventKind::kGemm && confined.count({e.device, std::string(tr.instruction_of(e))})) {
      confined_gemms[e.device].push_back({e.start_ns, e.end_ns});
    }
    order.push_back(i);
  }
  for (auto& [d, v] : collectives) v = merge(std::move(v));
  for (auto& [d, v] : confined_gemms) v = merge(std::move(v));
  for (auto& [d, streams] : kernels) {
    for (auto& [s, v] : streams) v = merge(std::move(v));
  }
  // Events per (device, instruction, kind) in time order.
  std::map<Key, std::vector<size_t>> by_key;
  int64_t unmatched = 0;
  for (size_t i : order) {
    const trace::Event& e = tr.events[i];
    if (e.kind == EventKind::kWait || e.kind == EventKind::kMemset) continue;
    Key key{e.device, tr.instruction_of(e), thunk_kind_for(e.kind)};
    if (thunks.count(key) == 0) {
      ++unmatched;
      continue;
    }
    by_key[key].push_back(i);
  }
  for (auto& [key, events] : by_key) {
    std::stable_sort(events.begin(), events.end(), [&](size_t a, size_t b) {
      return tr.events[a].start_ns < tr.events[b].start_ns;
    });
    const std::vector<const Thunk*>& matching = thunks.at(key);
    // One launch can run several kernels (cuBLAS split-K and its reduction):
    // when every launch of this instruction shows the same number of kernels,
    // each group of them is one sample spanning the group.
    std::vector<int32_t> iterations;
    for (size_t i : events) iterations.push_back(tr.events[i].iteration);
    std::sort(iterations.begin(), iterations.end());
    size_t launches = matching.size() * static_cast<size_t>(std::unique(iterations.begin(), iterations.end()) -
                                                            iterations.begin());
    size_t per_launch = launches > 0 && events.size() % launches == 0 ? events.size() / launches : 1;
    for (size_t g = 0; g * per_launch < events.size(); ++g) {
      const trace::Event& e = tr.events[events[g * per_launch]];
      int64_t start = e.start_ns, end = e.end_ns;
      for (size_t j = 1; j < per_launch; ++j) end = std::max(end, tr.events[events[g * per_launch + j]].end_ns);
      Sample s;
      s.thunk = matching[g % matching.size()];  // repeated iterations run the same thunks again
      s.run = &run;
      s.duration_ns = static_cast<double>(end - start);
      s.device = e.device;
      s.stream = e.stream;
      s.start_ns = start;
      s.end_ns = end;
      if (auto c = collectives.find(e.device); c != collectives.end() && e.kind != EventKind::kCollective) {
        s.collective_overlap_ns = overlap(c->second, start, end);
        s.started_inside_collective =
            overlap(c->second, start - 1, start) > 0 && overlap(c->second, start, start + 1) > 0;
      }
      if (auto k = kernels.find(e.device); k != kernels.end()) {
        for (const auto& [stream, merged] : k->second) {
          // Closed at both ends: a kernel that waited for this one's SMs
          // starts the very nanosecond it ends (in the simulator; on a GPU
          // its first CTAs start a little before).
          if (stream != e.stream) s.kernel_overlap_ns += overlap(merged, start - 1, end + 1);
        }
      }
      if (auto g = confined_gemms.find(e.device); g != confined_gemms.end() && e.kind == EventKind::kCollective) {
        s.confined_overlap_ns = overlap(g->second, start, end);
      }
      out->push_back(s);
    }
  }
  if (unmatched > 0) {
    notes->push_back(fmt::format("run {}: {} events name no instruction of the program and were skipped", run.run_id,
                                 unmatched));
  }
}

bool alone(const Sample& s) { return s.collective_overlap_ns == 0 && s.kernel_overlap_ns == 0; }

using GemmShape = std::tuple<int64_t, int64_t, int64_t, int64_t, int>;  // m, n, k, batch, type
GemmShape shape_of(const Thunk& t) {
  return GemmShape{t.gemm.m, t.gemm.n, t.gemm.k, t.gemm.batch, static_cast<int>(t.gemm.type)};
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// SMs a GEMM sample ran on (0: all), as the cost model sees them.
int64_t sms_of(const DeviceModel& model, const Sample& s) { return gemm_sms(model, *s.thunk, s.run->comm_sms); }

double hbm_bytes_per_ns(const DeviceModel& model) { return model.hbm_bandwidth_gbps * model.hbm_efficiency; }

size_t bucket(const std::vector<int64_t>& edges, int64_t v) {
  return static_cast<size_t>(std::upper_bound(edges.begin(), edges.end(), v) - edges.begin());
}

double gemm_flops(const Sample& s) {
  if (s.thunk->flops > 0) return static_cast<double>(s.thunk->flops);
  const sched::GemmDims& d = s.thunk->gemm;
  return 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k) *
         static_cast<double>(std::max<int64_t>(d.batch, 1));
}

// Least squares y = a + b x. False when x does not vary.
bool fit_line(const std::vector<std::pair<double, double>>& points, double* a, double* b) {
  if (points.size() < 2) return false;
  double n = static_cast<double>(points.size()), sx = 0, sy = 0;
  for (auto [x, y] : points) sx += x, sy += y;
  double mx = sx / n, my = sy / n, sxx = 0, sxy = 0;
  for (auto [x, y] : points) sxx += (x - mx) * (x - mx), sxy += (x - mx) * (y - my);
  if (sxx <= 1e-12 * mx * mx * n) return false;
  *b = sxy / sxx;
  *a = my - *b * mx;
  return true;
}

std::string today_utc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d", &tm);
  return buf;
}

// A mean of values weighted by how much of the measurement each stands for.
struct WeightedMean {
  double weighted = 0, weight = 0;
  int64_t n = 0;
  void add(double value, double w) {
    weighted += value * w;
    weight += w;
    ++n;
  }
  double value() const { return weighted / weight; }
};

class Fitter {
 public:
  Fitter(const DeviceModel& base, std::vector<Sample> samples, std::string provenance)
      : base_(base), model_(base), samples_(std::move(samples)), provenance_(std::move(provenance)) {}

  void fit_launch_gap();
  void fit_memory_bandwidth();
  void fit_copy_bandwidth();
  void fit_min_kernel();
  void fit_gemm_efficiency();
  void fit_collectives();
  void fit_contention();
  void fit_comm_beside_confined_gemms();
  void fit_comm_under_compute();
  void fit_sm_limited_gemms();
  void fit_concurrency();

  Calibration take() && { return std::move(out_); }
  Calibration& out() { return out_; }
  DeviceModel& model() { return model_; }

 private:
  // *field (us) = the median of `values_ns`, when there are at least 5.
  void fit_median_us(const std::string& key, std::vector<double> values_ns, const std::string& what, double* field) {
    if (values_ns.size() < 5) {
      out_.notes.push_back(fmt::format("{}: {} {} (5 needed); kept the base value", key, values_ns.size(), what));
      return;
    }
    const size_t n = values_ns.size();
    const double us = median(std::move(values_ns)) / 1e3;
    record(key, *field, us, static_cast<int64_t>(n), fmt::format("median of {} {}", n, what));
    *field = us;
  }
  // Per GEMM shape, the median duration of its samples that ran alone on
  // every SM: what a GEMM beside a collective is measured against.
  std::map<GemmShape, double> median_alone_gemm_ns() const {
    std::map<GemmShape, std::vector<double>> durations;
    for (const Sample& s : samples_) {
      if (s.thunk->kind == ThunkKind::kGemm && alone(s) && sms_of(model_, s) == 0) {
        durations[shape_of(*s.thunk)].push_back(s.duration_ns);
      }
    }
    std::map<GemmShape, double> out;
    for (auto& [shape, v] : durations) out[shape] = median(std::move(v));
    return out;
  }
  // A kernel's launch: in the cost model's standalone time, before the event.
  double launch_ns() const { return model_.kernel_launch_us * 1e3; }
  // A collective's rate while overlapped for `t` of its measured duration d,
  // against the fitted model's time alone w: w = (d - t) + t * rate. Absent
  // for a local copy, which has no rate to fit.
  std::optional<double> rate_while_overlapped(const Sample& s, double t) const {
    const sched::CollectiveInfo& info = s.thunk->collective;
    CollectiveCost cost = collective_cost(model_, info, static_cast<int64_t>(info.group.size()));
    if (!cost.protocol) return std::nullopt;
    return std::clamp((cost.work_ns - (s.duration_ns - t)) / t, 0.05, 1.0);
  }
  void record(const std::string& key, double before, double after, int64_t samples, std::string detail) {
    out_.sources[key] = fmt::format("{}: {}", provenance_, detail);
    out_.fitted.push_back({key, before, after, samples, std::move(detail)});
  }
  // *field = `mean`, recorded as `key`; without samples, the note `none`.
  void fit_mean(const std::string& key, const WeightedMean& mean, const std::string& none, std::string detail,
                double* field) {
    if (mean.n == 0) {
      out_.notes.push_back(none);
      return;
    }
    record(key, *field, mean.value(), mean.n, std::move(detail));
    *field = mean.value();
  }

  const DeviceModel& base_;
  DeviceModel model_;
  std::vector<Sample> samples_;
  std::string provenance_;
  Calibration out_;
};

// kernel_launch_us from the gaps between back-to-back launches on one stream:
// the next kernel (or GEMM) starts that long after the previous one ends when
// the GPU, not the host, is behind. Gaps over 50 us (host-bound stretches,
// iteration boundaries) say nothing about the launch; the median shrugs off
// the few waits for another stream in between.
void Fitter::fit_launch_gap() {
  using Track = std::tuple<const CalibrationRun*, int32_t, int32_t>;
  std::map<Track, std::vector<const Sample*>> tracks;
  for (const Sample& s : samples_) {
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
  fit_median_us("kernel_launch_us", std::move(gaps), "gaps between back-to-back kernels on one stream",
                &model_.kernel_launch_us);
}

// The model's busy time of a non-GEMM kernel, before min_kernel_us.
double kernel_busy_ns(const DeviceModel& m, const Thunk& t) {
  const double compute_ns = static_cast<double>(t.flops) / (m.peak_f32_tflops * 1e12 * m.kernel_compute_efficiency) * 1e9;
  const double memory_ns = static_cast<double>(t.bytes_accessed) / hbm_bytes_per_ns(m);
  return std::max(compute_ns, memory_ns);
}

// Kernels that do next to nothing (the model's time under 0.2 us) take as
// long as a kernel takes at least: min_kernel_us is their median duration.
void Fitter::fit_min_kernel() {
  std::vector<double> durations;
  for (const Sample& s : samples_) {
    if (s.thunk->kind == ThunkKind::kKernel && kernel_busy_ns(model_, *s.thunk) < 200) {
      durations.push_back(s.duration_ns);
    }
  }
  fit_median_us("min_kernel_us", std::move(durations), "durations of kernels the model gives under 0.2 us of work",
                &model_.min_kernel_us);
}

// Whether a sample is a kernel that streams memory alone on `path`: memory
// bound under the base model's rates (compute-bound kernels say nothing about
// HBM) and long enough to stream (a few microseconds measure start-up).
bool streams_alone(const DeviceModel& base, const Sample& s, CopyPath path) {
  if (s.thunk->kind != ThunkKind::kKernel || !alone(s) || s.thunk->bytes_accessed <= 0 || s.duration_ns <= 0) {
    return false;
  }
  if (copy_path(*s.thunk) != path) return false;
  double compute_ns = static_cast<double>(s.thunk->flops) /
                      (base.peak_f32_tflops * 1e12 * base.kernel_compute_efficiency) * 1e9;
  double memory_ns = static_cast<double>(s.thunk->bytes_accessed) / hbm_bytes_per_ns(base);
  return compute_ns <= memory_ns && memory_ns >= 5e3;
}

void Fitter::fit_memory_bandwidth() {
  double bytes = 0, busy = 0;
  int64_t n = 0;
  for (const Sample& s : samples_) {
    if (!streams_alone(base_, s, CopyPath::kNone)) continue;
    bytes += static_cast<double>(s.thunk->bytes_accessed);
    busy += s.duration_ns;  // the launch is the gap before the kernel, not in it
    ++n;
  }
  if (n == 0 || busy <= 0) {
    out_.notes.push_back("hbm_efficiency: no memory-bound kernel ran alone; kept the base value");
    return;
  }
  double achieved = bytes / busy;  // GB/s
  double eff = achieved / model_.hbm_bandwidth_gbps;
  if (eff > 1) {
    out_.notes.push_back(fmt::format("hbm_efficiency: kernels reached {:.0f} GB/s, above the {:.0f} GB/s peak; "
                                     "capped at 1", achieved, model_.hbm_bandwidth_gbps));
    eff = 1;
  }
  record("hbm_efficiency", model_.hbm_efficiency, eff, n,
         fmt::format("{} memory-bound kernels alone moved {:.0f} bytes in {:.0f} ns: {:.0f} GB/s of {:.0f}", n, bytes,
                     busy, achieved, model_.hbm_bandwidth_gbps));
  model_.hbm_efficiency = eff;
}

// copy_engine_bandwidth_scale and copy_kernel_bandwidth_scale: what the
// copies of each path moved alone, over the fitted elementwise rate.
void Fitter::fit_copy_bandwidth() {
  const std::pair<CopyPath, const char*> paths[] = {{CopyPath::kCopyEngine, "copy_engine_bandwidth_scale"},
                                                    {CopyPath::kCopyKernel, "copy_kernel_bandwidth_scale"}};
  for (const auto& [path, key] : paths) {
    double bytes = 0, busy = 0;
    int64_t n = 0;
    for (const Sample& s : samples_) {
      if (!streams_alone(base_, s, path)) continue;
      bytes += static_cast<double>(s.thunk->bytes_accessed);
      busy += s.duration_ns;
      ++n;
    }
    double* field = path == CopyPath::kCopyEngine ? &model_.copy_engine_bandwidth_scale
                                                  : &model_.copy_kernel_bandwidth_scale;
    if (n == 0 || busy <= 0) {
      out_.notes.push_back(fmt::format("{}: no such copy streamed alone; kept the base value", key));
      continue;
    }
    const double achieved = bytes / busy;  // GB/s
    const double scale = achieved / hbm_bytes_per_ns(model_);
    record(key, *field, scale, n,
           fmt::format("{} copies alone moved {:.0f} bytes in {:.0f} ns: {:.0f} GB/s, over the elementwise {:.0f} GB/s",
                       n, bytes, busy, achieved, hbm_bytes_per_ns(model_)));
    *field = scale;
  }
}

// gemm_efficiency.values per bucket and gemm_wave_overhead_us, jointly:
// busy = ideal / efficiency + waves * overhead, where ideal is the time at
// the peak with wave quantization; least squares in relative error. The
// overhead is fitted only when the GEMMs' waves do not follow their ideal
// time within every bucket (else it cannot be told from the efficiency).
void Fitter::fit_gemm_efficiency() {
  GemmEfficiencyTable& table = model_.gemm_efficiency;
  if (table.values.empty()) {
    out_.notes.push_back("gemm_efficiency: the base model has no table");
    return;
  }
  struct Point {
    double ideal_ns, waves, busy_ns;
  };
  using Bucket = std::tuple<size_t, size_t, size_t>;
  std::map<Bucket, std::vector<Point>> buckets;
  for (const Sample& s : samples_) {
    if (s.thunk->kind != ThunkKind::kGemm || !alone(s) || sms_of(model_, s) > 0) continue;
    const sched::GemmDims& d = s.thunk->gemm;
    double peak = gemm_peak_flops(model_, d.type, s.run->allow_tf32);
    double quantization = gemm_efficiency(model_, d) / table.lookup(d.m, d.n, d.k);
    double busy = s.duration_ns;  // the launch is the gap before the kernel
    double memory_ns = static_cast<double>(s.thunk->bytes_accessed) / hbm_bytes_per_ns(model_);
    if (peak <= 0 || busy <= 0 || memory_ns >= 0.9 * busy) continue;  // memory bound: no compute information
    buckets[{bucket(table.m_edges, d.m), bucket(table.n_edges, d.n), bucket(table.k_edges, d.k)}].push_back(
        {gemm_flops(s) / (peak * quantization) * 1e9, static_cast<double>(gemm_waves(model_, d)), busy});
  }
  if (buckets.empty()) {
    out_.notes.push_back("gemm_efficiency: no compute-bound GEMM ran alone; kept the base table");
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
  double overhead_ns = model_.gemm_wave_overhead_us * 1e3;
  if (sqq > 1e-6 * sww) {
    overhead_ns = std::max(0.0, spq / sqq);
    int64_t n = 0;
    for (const auto& [b, points] : buckets) n += static_cast<int64_t>(points.size());
    record("gemm_wave_overhead_us", model_.gemm_wave_overhead_us, overhead_ns / 1e3, n,
           fmt::format("least squares with the efficiency of each bucket over {} GEMMs that ran alone: busy = time "
                       "at the peak (wave quantization in) / efficiency + waves x overhead", n));
    model_.gemm_wave_overhead_us = overhead_ns / 1e3;
  } else {
    out_.notes.push_back("gemm_wave_overhead_us: the GEMMs alone had the same waves for their work in every bucket; "
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
    out_.fitted.push_back({key, cell, eff, n,
                           fmt::format("{} GEMMs alone reached {:.4f} of peak before wave quantization and the "
                                       "waves' overhead", n, eff)});
    parts.push_back(fmt::format("[{}][{}][{}] = {:.4f} from {} GEMMs", im, in, ik, eff, n));
    cell = eff;
    total += n;
  }
  std::string joined;
  for (const std::string& p : parts) joined += (joined.empty() ? "" : "; ") + p;
  std::string kept = model_.file.empty() ? std::string() : fmt::format("; other buckets kept from {}", model_.file);
  out_.sources["gemm_efficiency.values"] =
      fmt::format("{}: achieved FLOP/s over peak of {} GEMMs that ran alone, wave quantization, the waves' overhead "
                  "and launch taken out: {}{}", provenance_, total, joined, kept);
}

void Fitter::fit_collectives() {
  struct Group {
    std::vector<std::pair<double, double>> points;  // (bytes S, duration ns)
    double bus_factor = 0;                          // algbw / bus bandwidth in the cost model
    double latency_ns = 0;                          // protocol latency in the cost model
    const NcclProtocol* protocol = nullptr;
    bool p2p = false;
  };
  std::map<std::pair<int, int64_t>, Group> groups;
  for (const Sample& s : samples_) {
    if (s.thunk->kind != ThunkKind::kCollective || s.kernel_overlap_ns > 0) continue;
    const sched::CollectiveInfo& info = s.thunk->collective;
    int64_t n = static_cast<int64_t>(info.group.size());
    CollectiveCost cost = collective_cost(base_, info, n);
    if (!cost.protocol || cost.algbw_gbps <= 0) continue;  // local copies
    bool p2p = info.op == hlo::Opcode::kCollectivePermute;
    const double* scale = bandwidth_scale(base_, info.op);
    double bus = p2p ? base_.p2p_bandwidth_gbps : base_.nccl_bus_bandwidth_gbps * (scale ? *scale : 1.0);
    // The cost model's message size S: work = launch + latency + S / algbw.
    double bytes = (cost.work_ns - base_.nccl_launch_us * 1e3 - cost.latency_ns) * cost.algbw_gbps;
    Group& g = groups[{static_cast<int>(info.op), n}];
    if (g.protocol && g.protocol != cost.protocol) {
      // Keep one protocol per line: the one NCCL's model picks for the larger message.
      if (bytes <= (g.points.empty() ? 0 : std::max_element(g.points.begin(), g.points.end())->first)) continue;
      g.points.clear();
    }
    g.protocol = cost.protocol;
    g.bus_factor = cost.algbw_gbps / bus;
    g.latency_ns = cost.latency_ns;
    g.p2p = p2p;
    g.points.emplace_back(std::round(bytes), s.duration_ns);
  }
  if (groups.empty()) {
    out_.notes.push_back("collectives: none ran without compute beside them; kept the base bandwidths");
    return;
  }
  struct Acc {
    double weighted = 0, weight = 0;
    int64_t n = 0;
    std::string detail;
  };
  Acc ring, p2p, launch;
  std::map<int, Acc> ring_by_op;  // bus bandwidth of each ring collective kind
  for (const auto& [key, g] : groups) {
    std::string_view op = hlo::opcode_name(static_cast<hlo::Opcode>(key.first));
    double a = 0, b = 0;
    bool line = fit_line(g.points, &a, &b) && b > 0;
    if (!line) {
      // One message size: the slope through the base model's fixed cost.
      a = base_.nccl_launch_us * 1e3 + g.latency_ns;
      double sx = 0, sy = 0;
      for (auto [x, y] : g.points) sx += x, sy += y - a;
      if (sx <= 0 || sy <= 0) continue;
      b = sy / sx;
    }
    double algbw = 1.0 / b;  // bytes/ns == GB/s
    double busbw = algbw / g.bus_factor;
    double weight = static_cast<double>(g.points.size());
    std::string detail = fmt::format("{} x{} ({} runs, {} protocol): algbw {:.1f} GB/s -> busbw {:.1f} GB/s{}", op,
                                     key.second, g.points.size(), g.protocol->name, algbw, busbw,
                                     line ? fmt::format(", intercept {:.2f} us", a / 1e3) : ", one size");
    for (Acc* acc : {g.p2p ? &p2p : &ring, g.p2p ? nullptr : &ring_by_op[key.first]}) {
      if (!acc) continue;
      acc->weighted += busbw * weight;
      acc->weight += weight;
      acc->n += static_cast<int64_t>(g.points.size());
      acc->detail += (acc->detail.empty() ? "" : "; ") + detail;
    }
    if (line) {
      launch.weighted += (a - g.latency_ns) * weight;
      launch.weight += weight;
      launch.n += static_cast<int64_t>(g.points.size());
      launch.detail += (launch.detail.empty() ? "" : "; ") +
                       fmt::format("{} x{}: intercept {:.2f} us - {} latency {:.2f} us", op, key.second, a / 1e3,
                                   g.protocol->name, g.latency_ns / 1e3);
    }
  }
  if (ring.weight > 0) {
    double v = ring.weighted / ring.weight;
    record("nccl_bus_bandwidth_gbps", model_.nccl_bus_bandwidth_gbps, v, ring.n,
           "least-squares duration = a + bytes / algbw per collective and group size, busbw = algbw / (factor of "
           "the ring model): " + ring.detail);
    model_.nccl_bus_bandwidth_gbps = v;
    // Each kind's own bandwidth relative to the mean; kinds that did not run
    // keep the base model's scale.
    for (const auto& [op, acc] : ring_by_op) {
      double* scale = bandwidth_scale(model_, static_cast<hlo::Opcode>(op));
      if (!scale || acc.weight <= 0) continue;
      const double fitted = acc.weighted / acc.weight / v;
      std::string key = fmt::format("{}_bandwidth_scale", hlo::opcode_name(static_cast<hlo::Opcode>(op)));
      std::replace(key.begin(), key.end(), '-', '_');
      record(key, *scale, fitted, acc.n,
             fmt::format("bus bandwidth of this kind over nccl_bus_bandwidth_gbps ({:.1f} GB/s): {}", v, acc.detail));
      *scale = fitted;
    }
  }
  if (p2p.weight > 0) {
    double v = p2p.weighted / p2p.weight;
    record("p2p_bandwidth_gbps", model_.p2p_bandwidth_gbps, v, p2p.n,
           "least-squares duration = a + bytes / bandwidth of collective-permutes: " + p2p.detail);
    model_.p2p_bandwidth_gbps = v;
  }
  if (launch.weight > 0) {
    double ns = launch.weighted / launch.weight;
    if (ns < 0) {
      out_.notes.push_back(fmt::format("nccl_launch_us: the fitted fixed cost is {:.2f} us below NCCL's protocol "
                                       "latency; set to 0", -ns / 1e3));
      ns = 0;
    }
    record("nccl_launch_us", model_.nccl_launch_us, ns / 1e3, launch.n,
           "intercept of the collective lines minus NCCL's modelled protocol latency: " + launch.detail);
    model_.nccl_launch_us = ns / 1e3;
  } else {
    out_.notes.push_back("nccl_launch_us: every collective had one message size; kept the base value");
  }
}

void Fitter::fit_contention() {
  if (model_.sm_count <= 0 || model_.nccl_channels <= 0) return;
  const double sm_share = static_cast<double>(model_.nccl_channels) / model_.sm_count;
  const std::map<GemmShape, double> alone_ns = median_alone_gemm_ns();
  WeightedMean mean;
  int64_t measured = 0, unslowed = 0;
  for (const Sample& s : samples_) {
    if (s.thunk->kind != ThunkKind::kGemm || s.kernel_overlap_ns > 0 || sms_of(model_, s) > 0) continue;
    double t_o = s.collective_overlap_ns;
    if (t_o < 0.2 * s.duration_ns) continue;
    KernelCost cost = gemm_cost(model_, *s.thunk, s.run->allow_tf32);
    double work = cost.work_ns - launch_ns();
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
  fit_mean("contention_factor", mean,
           unslowed > 0 ? fmt::format("contention_factor: {} GEMMs beside a collective were not slower than alone; "
                                      "kept the base value", unslowed)
                        : "contention_factor: no GEMM overlapped a collective; kept the base value",
           fmt::format("{} GEMMs beside a collective against the same GEMM alone ({} measured alone, {} predicted by "
                       "the fitted table): kept 1 - {}/{} x f of the compute", mean.n, measured, mean.n - measured,
                       model_.nccl_channels, model_.sm_count),
           &model_.contention_factor);
}

// comm_rate_beside_confined_gemm from collectives that ran beside GEMMs
// confined to fewer SMs (and beside no other kernel) for most of their time:
// their rate while overlapped (rate_while_overlapped).
// Each ring kind gets the mean of its own samples; kinds without any, and
// permutes, the mean of all.
void Fitter::fit_comm_beside_confined_gemms() {
  WeightedMean mean;
  std::map<hlo::Opcode, WeightedMean> by_kind;
  for (const Sample& s : samples_) {
    if (s.thunk->kind != ThunkKind::kCollective) continue;
    const double t = s.confined_overlap_ns;
    // Mostly overlapped: the rate is read off the overlapped part, where a
    // small error in the time alone would be multiplied by d / t otherwise.
    if (t < 0.5 * s.duration_ns || s.kernel_overlap_ns > 1.01 * t + 10) continue;
    const std::optional<double> rate = rate_while_overlapped(s, t);
    if (!rate) continue;
    mean.add(*rate, t);
    by_kind[s.thunk->collective.op].add(*rate, t);
  }
  const std::string how = "against the fitted collective model's time alone: their rate while overlapped, weighted by "
                          "the overlap";
  fit_mean("comm_rate_beside_confined_gemm", mean,
           "comm_rate_beside_confined_gemm: no collective ran beside a GEMM confined to fewer SMs for most of its "
           "time; kept the base value",
           fmt::format("{} collectives beside GEMMs confined to fewer SMs {}", mean.n, how),
           &model_.comm_rate_beside_confined_gemm);
  if (mean.n == 0) return;
  for (hlo::Opcode op : {hlo::Opcode::kAllGather, hlo::Opcode::kReduceScatter, hlo::Opcode::kAllReduce}) {
    double* field = rate_beside_confined_gemm(model_, op);
    auto it = by_kind.find(op);
    if (it == by_kind.end()) {
      *field = model_.comm_rate_beside_confined_gemm;
      continue;
    }
    fit_mean(rate_beside_confined_gemm_key(op), it->second, "",
             fmt::format("{} {}s beside GEMMs confined to fewer SMs {}", it->second.n, hlo::opcode_name(op), how),
             field);
  }
}

// comm_rate_under_compute from collectives that ran beside compute kernels
// on every SM (a permute beside a GEMM: only ring collectives confine them)
// for most of their time, as comm_rate_beside_confined_gemm is fitted. Such
// kernels are taken to fill the device, where the cost model's rate is
// comm_rate_under_compute itself.
void Fitter::fit_comm_under_compute() {
  WeightedMean mean;
  for (const Sample& s : samples_) {
    if (s.thunk->kind != ThunkKind::kCollective || s.confined_overlap_ns > 0) continue;
    const double t = s.kernel_overlap_ns;
    if (t < 0.5 * s.duration_ns) continue;
    if (const std::optional<double> rate = rate_while_overlapped(s, t)) mean.add(*rate, t);
  }
  fit_mean("comm_rate_under_compute", mean,
           "comm_rate_under_compute: no collective ran beside compute kernels on every SM for most of its time; "
           "kept the base value",
           fmt::format("{} collectives beside compute kernels on every SM against the fitted collective model's time "
                       "alone: their rate while overlapped, weighted by the overlap", mean.n),
           &model_.comm_rate_under_compute);
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
void Fitter::fit_sm_limited_gemms() {
  const std::map<GemmShape, double> alone_ns = median_alone_gemm_ns();
  DeviceModel unscaled = model_;
  unscaled.sm_limited_gemm_scale = 1;
  // Per shape and SM count, the median measured time of those that started
  // first (the median iteration is what is scored).
  struct Shape {
    double predicted = 0;
    std::vector<double> measured, measured_first;  // all; those that reached the SMs before the collective
  };
  std::map<std::pair<GemmShape, int64_t>, Shape> shapes;
  int64_t n = 0, measured_alone = 0;
  for (const Sample& s : samples_) {
    const int64_t sms = s.thunk->kind == ThunkKind::kGemm ? sms_of(model_, s) : 0;
    if (sms == 0 || s.kernel_overlap_ns > 0) continue;
    Shape& shape = shapes[{shape_of(*s.thunk), sms}];
    if (shape.measured.empty()) {
      shape.predicted = gemm_cost(unscaled, *s.thunk, s.run->allow_tf32, sms).work_ns - launch_ns();
      if (auto it = alone_ns.find(shape_of(*s.thunk)); it != alone_ns.end()) {
        shape.predicted *= it->second / (gemm_cost(unscaled, *s.thunk, s.run->allow_tf32).work_ns - launch_ns());
      }
    }
    if (alone_ns.count(shape_of(*s.thunk))) ++measured_alone;
    shape.measured.push_back(s.duration_ns);
    if (!s.started_inside_collective) shape.measured_first.push_back(s.duration_ns);
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
    out_.notes.push_back("sm_limited_gemm_scale: no GEMM ran on fewer SMs beside a collective; kept the base value");
    return;
  }
  const double scale = predicted_sum / measured_sum;
  record("sm_limited_gemm_scale", model_.sm_limited_gemm_scale, scale, n,
         fmt::format(
             "{} GEMMs on fewer SMs beside a collective ({} of them of shapes measured alone on every SM; "
             "{} started before their collective and stood for their shape): the model's time on that many "
             "SMs over the median measured one per shape",
             n, measured_alone, first));
  model_.sm_limited_gemm_scale = scale;
}

// concurrent_kernel_efficiency from pairs of GEMMs on two streams of one
// device (beside no collective) whose needs add up past the device, the
// second starting before the first ended. In the cost model the first runs
// at that efficiency while the second waits for its SMs, then the second
// runs alone: span = busy_first / efficiency + busy_second.
void Fitter::fit_concurrency() {
  WeightedMean mean;
  for (size_t i = 0; i < samples_.size(); ++i) {
    const Sample& a = samples_[i];
    if (a.thunk->kind != ThunkKind::kGemm || a.collective_overlap_ns > 0) continue;
    for (size_t j = i + 1; j < samples_.size(); ++j) {
      const Sample& b = samples_[j];
      if (b.thunk->kind != ThunkKind::kGemm || b.run != a.run || b.device != a.device || b.stream == a.stream ||
          b.collective_overlap_ns > 0) {
        continue;
      }
      const Sample& first = a.start_ns <= b.start_ns ? a : b;
      const Sample& second = a.start_ns <= b.start_ns ? b : a;
      if (second.start_ns > first.end_ns) continue;  // one after the other
      KernelCost c1 = gemm_cost(model_, *first.thunk, first.run->allow_tf32, sms_of(model_, first));
      KernelCost c2 = gemm_cost(model_, *second.thunk, second.run->allow_tf32, sms_of(model_, second));
      if (c1.compute_need + c2.compute_need <= 1) continue;  // the pair fits the device: nothing to learn
      const double span = static_cast<double>(std::max(first.end_ns, second.end_ns) - first.start_ns);
      const double rest = span - (c2.work_ns - launch_ns());
      if (rest <= 0) continue;
      const double efficiency = std::clamp((c1.work_ns - launch_ns()) / rest, 0.05, 1.0);
      mean.add(efficiency, span);
    }
  }
  fit_mean("concurrent_kernel_efficiency", mean,
           "concurrent_kernel_efficiency: no two GEMMs on two streams met on one device; kept the base value",
           fmt::format("{} pairs of GEMMs on two streams, the second started before the first ended: the first's "
                       "work alone (fitted model) over the pair's span less the second's work", mean.n),
           &model_.concurrent_kernel_efficiency);
}

}  // namespace

Result<Calibration> calibrate_detailed(const DeviceModel& base, const std::vector<CalibrationRun>& runs,
                                       const CalibrateOptions& options) {
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
  Fitter fitter(base, std::move(samples), fmt::format("calibrated from runs {} on {}", ids, date));
  fitter.out().sources = read_device_sources(base.file);
  fitter.out().notes = std::move(notes);
  // Order matters: GEMMs use the fitted HBM rate, contention the fitted table.
  fitter.fit_launch_gap();
  fitter.fit_memory_bandwidth();
  fitter.fit_copy_bandwidth();
  fitter.fit_min_kernel();
  fitter.fit_gemm_efficiency();
  fitter.fit_collectives();
  fitter.fit_contention();
  fitter.fit_comm_beside_confined_gemms();
  fitter.fit_comm_under_compute();
  fitter.fit_sm_limited_gemms();
  fitter.fit_concurrency();
  if (fitter.out().fitted.empty()) {
    return invalid_input(fmt::format("calibrate: runs {} hold no event that fits any number (need GEMMs, "
                                     "memory-bound kernels or collectives that ran alone)", ids));
  }
  fitter.model().file.clear();
  fitter.out().model = fitter.model();
  return std::move(fitter).take();
}

Result<DeviceModel> calibrate(const DeviceModel& base, const std::vector<CalibrationRun>& runs) {
  SL_ASSIGN_OR_RETURN(Calibration c, calibrate_detailed(base, runs));
  return std::move(c.model);
}

}  // namespace sl::sim
