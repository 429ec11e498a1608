#include "app/gui/layout/viewport.h"

#include <cmath>

namespace sl::gui {

Viewport normalized(int64_t start_ns, int64_t end_ns) {
  if (end_ns < start_ns) std::swap(start_ns, end_ns);
  if (end_ns - start_ns < kMinSpanNs) {
    int64_t mid = start_ns + (end_ns - start_ns) / 2;
    start_ns = mid - kMinSpanNs / 2;
    end_ns = start_ns + kMinSpanNs;
  }
  return {start_ns, end_ns};
}

Viewport zoom_at(const Viewport& v, double factor, int64_t anchor_ns) {
  if (!(factor > 0) || !std::isfinite(factor)) return v;
  // Keep the anchor at the same fraction of the view.
  double left = static_cast<double>(anchor_ns - v.start_ns) * factor;
  double right = static_cast<double>(v.end_ns - anchor_ns) * factor;
  double span = left + right;
  if (span < kMinSpanNs) {
    double scale = kMinSpanNs / std::max(span, 1e-9);
    left *= scale;
    right *= scale;
  }
  constexpr double kMaxSpan = 1e15;  // ~11 days: keeps int64 arithmetic far from overflow
  if (left + right > kMaxSpan) return v;
  auto start = anchor_ns - static_cast<int64_t>(std::llround(left));
  auto end = anchor_ns + static_cast<int64_t>(std::llround(right));
  return normalized(start, end);
}

Viewport pan_by(const Viewport& v, int64_t delta_ns) { return {v.start_ns + delta_ns, v.end_ns + delta_ns}; }

Viewport fit_range(int64_t begin_ns, int64_t end_ns) {
  if (end_ns <= begin_ns) return normalized(begin_ns, begin_ns + 1000);
  int64_t margin = std::max<int64_t>(1, (end_ns - begin_ns) / 50);
  return normalized(begin_ns - margin, end_ns + margin);
}

}  // namespace sl::gui
