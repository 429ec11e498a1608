#include "app/gui/layout/colors.h"

#include <algorithm>

namespace sl::gui {

Rgb kind_rgb(trace::EventKind kind) {
  switch (kind) {
    case trace::EventKind::kGemm: return {66, 133, 244};         // blue
    case trace::EventKind::kCollective: return {240, 140, 30};   // orange
    case trace::EventKind::kElementwise: return {80, 180, 90};   // green
    case trace::EventKind::kCopy: return {170, 100, 210};        // purple
    case trace::EventKind::kMemset: return {210, 190, 60};       // yellow
    case trace::EventKind::kWait: return {140, 140, 140};        // grey
    case trace::EventKind::kOther: return {90, 180, 190};        // teal
  }
  return {200, 200, 200};
}

uint32_t merged_color(trace::EventKind kind, double density) {
  const Rgb c = kind_rgb(kind);
  // 0.35 (nearly empty) .. 0.75 (solid): always darker than a single event.
  const double f = 0.35 + 0.4 * std::clamp(density, 0.0, 1.0);
  auto scale = [f](uint8_t v) { return static_cast<uint8_t>(static_cast<double>(v) * f); };
  return pack_rgba({scale(c.r), scale(c.g), scale(c.b)});
}

}  // namespace sl::gui
