#pragma once
// The visible time range of the timeline and the pixel <-> time mapping.
// Pure value type: the model owns one, layout and views read it.

#include <algorithm>
#include <cstdint>

namespace sl::gui {

struct Viewport {
  int64_t start_ns = 0;
  int64_t end_ns = 1000;

  int64_t span_ns() const { return std::max<int64_t>(1, end_ns - start_ns); }
  double ns_per_px(float width_px) const { return static_cast<double>(span_ns()) / std::max(1.0f, width_px); }
  // x in pixels from the left edge of the track area.
  float to_px(int64_t t_ns, float width_px) const {
    return static_cast<float>(static_cast<double>(t_ns - start_ns) / ns_per_px(width_px));
  }
  int64_t to_ns(float x_px, float width_px) const {
    return start_ns + static_cast<int64_t>(static_cast<double>(x_px) * ns_per_px(width_px));
  }
};

constexpr int64_t kMinSpanNs = 10;  // zooming stops at 10 ns across the whole view

// Zoom by `factor` (< 1 zooms in) keeping time `anchor_ns` at the same pixel.
Viewport zoom_at(const Viewport& v, double factor, int64_t anchor_ns);
// Shift by `delta_ns` (positive moves the view to later times).
Viewport pan_by(const Viewport& v, int64_t delta_ns);
// The whole [begin, end] range plus a small margin on both sides.
Viewport fit_range(int64_t begin_ns, int64_t end_ns);
// A range of at least kMinSpanNs, start before end.
Viewport normalized(int64_t start_ns, int64_t end_ns);

}  // namespace sl::gui
