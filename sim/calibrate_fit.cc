#include "sim/calibrate_fit.h"

#include <algorithm>
#include <ctime>

#include <fmt/format.h>

#include "sim/cost_model.h"

namespace sl::sim::calibrate_internal {

using GemmShape = std::tuple<int64_t, int64_t, int64_t, int64_t, int>;  // m, n, k, batch, type
GemmShape shape_of(const sched::Thunk& t) {
  return GemmShape{t.gemm.m, t.gemm.n, t.gemm.k, t.gemm.batch, static_cast<int>(t.gemm.type)};
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

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

void FitLog::record(const std::string& key, double before, double after, int64_t samples, std::string detail) {
  set_source(key, detail);
  add_fitted(key, before, after, samples, std::move(detail));
}

void FitLog::add_fitted(const std::string& key, double before, double after, int64_t samples, std::string detail) {
  out_.fitted.push_back({key, before, after, samples, std::move(detail)});
}

void FitLog::set_source(const std::string& key, const std::string& detail) {
  out_.sources[key] = fmt::format("{}: {}", provenance_, detail);
}

void FitLog::fit_median_us(const std::string& key, std::vector<double> values_ns, const std::string& what,
                           double* field) {
  if (values_ns.size() < 5) {
    note(fmt::format("{}: {} {} (5 needed); kept the base value", key, values_ns.size(), what));
    return;
  }
  const size_t n = values_ns.size();
  const double us = median(std::move(values_ns)) / 1e3;
  record(key, *field, us, static_cast<int64_t>(n), fmt::format("median of {} {}", n, what));
  *field = us;
}

void FitLog::fit_mean(const std::string& key, const WeightedMean& mean, const std::string& none, std::string detail,
                      double* field) {
  if (mean.n == 0) {
    note(none);
    return;
  }
  record(key, *field, mean.value(), mean.n, std::move(detail));
  *field = mean.value();
}

std::map<GemmShape, double> median_alone_gemm_ns(const FitInputs& in, const DeviceModel& model) {
  std::map<GemmShape, std::vector<double>> durations;
  for (const Sample& s : in.samples) {
    if (s.thunk->kind == sched::ThunkKind::kGemm && alone(s) && sms_of(model, s) == 0) {
      durations[shape_of(*s.thunk)].push_back(s.duration_ns);
    }
  }
  std::map<GemmShape, double> out;
  for (auto& [shape, v] : durations) out[shape] = median(std::move(v));
  return out;
}

std::optional<double> rate_while_overlapped(const DeviceModel& model, const Sample& s, double t) {
  const sched::CollectiveInfo& info = s.thunk->collective;
  CollectiveCost cost = collective_cost(model, info, static_cast<int64_t>(info.group.size()));
  if (!cost.protocol) return std::nullopt;
  return std::clamp((cost.work_ns - (s.duration_ns - t)) / t, 0.05, 1.0);
}

}  // namespace sl::sim::calibrate_internal
