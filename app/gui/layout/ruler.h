#pragma once
// Time ruler ticks with an adaptive unit: the major step is the smallest
// 1-2-5 x 10^k ns step whose labels are at least `min_label_px` apart, and
// its unit (ns, µs, ms, s) is the largest one the step is a whole multiple of.
// At deep zoom far from 0 ("1969380 µs") labels turn relative: "+20 µs" from
// `origin_ns`, the last major tick at or before the view's start, which the
// view prints once in full.

#include <cstdint>
#include <string>
#include <vector>

#include "app/gui/layout/viewport.h"

namespace sl::gui {

enum class TimeUnit { kNs, kUs, kMs, kS };

int64_t unit_ns(TimeUnit unit);
const char* unit_suffix(TimeUnit unit);   // "ns", "µs", "ms", "s"
TimeUnit unit_for_step(int64_t step_ns);

// "1.57 ms", "820 ns", "3.2 s": three significant digits in the best unit.
std::string format_duration(int64_t ns);

struct RulerTick {
  float x = 0;          // pixels from the left edge
  int64_t t_ns = 0;
  bool major = false;   // major ticks carry a label
  std::string label;
};

struct Ruler {
  int64_t major_step_ns = 1;
  int64_t minor_step_ns = 1;
  TimeUnit unit = TimeUnit::kNs;
  bool relative = false;    // labels are "+N unit" from origin_ns
  int64_t origin_ns = 0;
  std::vector<RulerTick> ticks;
};

int64_t nice_step(double min_step_ns);   // smallest 1-2-5 x 10^k >= min_step_ns (>= 1)
// Where a major tick's label `label_w` wide starts: `pad` right of its tick,
// or left of it when it would pass the ruler's right edge (`width_px`), so
// the last label ("60 µs") is never cut to "60".
float ruler_label_x(float tick_x, float label_w, float width_px, float pad);

// Absolute labels longer than `max_label_digits` digits turn relative.
Ruler make_ruler(const Viewport& view, float width_px, float min_label_px = 90, int max_label_digits = 5);

}  // namespace sl::gui
