#include "app/gui/layout/colors.h"

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

uint32_t merged_color(trace::EventKind kind) {
  Rgb c = kind_rgb(kind);
  return pack_rgba({static_cast<uint8_t>(c.r * 6 / 10), static_cast<uint8_t>(c.g * 6 / 10),
                    static_cast<uint8_t>(c.b * 6 / 10)});
}

}  // namespace sl::gui
