#include "app/gui/layout/ruler.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace sl::gui {

int64_t unit_ns(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kNs: return 1;
    case TimeUnit::kUs: return 1000;
    case TimeUnit::kMs: return 1000000;
    case TimeUnit::kS: return 1000000000;
  }
  return 1;
}

const char* unit_suffix(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kNs: return "ns";
    case TimeUnit::kUs: return "\xC2\xB5s";
    case TimeUnit::kMs: return "ms";
    case TimeUnit::kS: return "s";
  }
  return "ns";
}

TimeUnit unit_for_step(int64_t step_ns) {
  if (step_ns >= 1000000000 && step_ns % 1000000000 == 0) return TimeUnit::kS;
  if (step_ns >= 1000000 && step_ns % 1000000 == 0) return TimeUnit::kMs;
  if (step_ns >= 1000 && step_ns % 1000 == 0) return TimeUnit::kUs;
  return TimeUnit::kNs;
}

std::string format_duration(int64_t ns) {
  const int64_t a = std::llabs(ns);
  TimeUnit unit = a >= 1000000000 ? TimeUnit::kS : a >= 1000000 ? TimeUnit::kMs : a >= 1000 ? TimeUnit::kUs : TimeUnit::kNs;
  if (unit == TimeUnit::kNs) return fmt::format("{} ns", ns);
  double v = static_cast<double>(ns) / static_cast<double>(unit_ns(unit));
  double av = std::fabs(v);
  int decimals = av >= 100 ? 0 : av >= 10 ? 1 : 2;
  return fmt::format("{:.{}f} {}", v, decimals, unit_suffix(unit));
}

int64_t nice_step(double min_step_ns) {
  if (!(min_step_ns > 1)) return 1;
  int64_t decade = 1;
  while (true) {
    for (int64_t m : {1, 2, 5}) {
      if (static_cast<double>(m * decade) >= min_step_ns) return m * decade;
    }
    if (decade > INT64_MAX / 100) return decade * 10;
    decade *= 10;
  }
}

Ruler make_ruler(const Viewport& view, float width_px, float min_label_px, int max_label_digits) {
  Ruler ruler;
  const double ns_per_px = view.ns_per_px(width_px);
  ruler.major_step_ns = nice_step(ns_per_px * min_label_px);
  // 1-2-5 steps split into 5, 4 (2 -> 0.5 each) and 5 minor parts; never below 1 ns.
  const int64_t lead = ruler.major_step_ns / static_cast<int64_t>(std::pow(10, std::floor(std::log10(ruler.major_step_ns))));
  const int64_t parts = lead == 2 ? 4 : 5;
  ruler.minor_step_ns = std::max<int64_t>(1, ruler.major_step_ns / parts);
  ruler.unit = unit_for_step(ruler.major_step_ns);
  const int64_t unit = unit_ns(ruler.unit);

  auto floor_div = [](int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); };
  const int64_t last_label = std::max(std::llabs(view.start_ns), std::llabs(view.end_ns)) / unit;
  ruler.relative = fmt::format("{}", last_label).size() > static_cast<size_t>(std::max(1, max_label_digits));
  if (ruler.relative) ruler.origin_ns = floor_div(view.start_ns, ruler.major_step_ns) * ruler.major_step_ns;
  int64_t t = floor_div(view.start_ns, ruler.minor_step_ns) * ruler.minor_step_ns;
  for (; t <= view.end_ns; t += ruler.minor_step_ns) {
    if (t < view.start_ns) continue;
    RulerTick tick;
    tick.t_ns = t;
    tick.x = view.to_px(t, width_px);
    tick.major = t % ruler.major_step_ns == 0;
    if (tick.major && ruler.relative) {
      tick.label = fmt::format("+{} {}", (t - ruler.origin_ns) / unit, unit_suffix(ruler.unit));
    } else if (tick.major) {
      tick.label = fmt::format("{} {}", t / unit, unit_suffix(ruler.unit));
    }
    ruler.ticks.push_back(std::move(tick));
    if (ruler.ticks.size() > 4096) break;  // a safety net against absurd widths
  }
  return ruler;
}

float ruler_label_x(float tick_x, float label_w, float width_px, float pad) {
  if (tick_x + pad + label_w <= width_px) return tick_x + pad;
  return tick_x - pad - label_w;
}

}  // namespace sl::gui
