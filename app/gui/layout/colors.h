#pragma once
// Event colours by kind, packed like ImGui's IM_COL32 (A<<24 | B<<16 | G<<8 | R)
// so the views can hand them to ImDrawList unchanged and tests can compare
// screenshot pixels against them.

#include <cstdint>

#include "core/trace/trace.h"

namespace sl::gui {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

constexpr uint32_t pack_rgba(Rgb c, uint8_t a = 255) {
  return (static_cast<uint32_t>(a) << 24) | (static_cast<uint32_t>(c.b) << 16) |
         (static_cast<uint32_t>(c.g) << 8) | c.r;
}
constexpr Rgb unpack_rgb(uint32_t packed) {
  return {static_cast<uint8_t>(packed & 0xff), static_cast<uint8_t>((packed >> 8) & 0xff),
          static_cast<uint8_t>((packed >> 16) & 0xff)};
}

Rgb kind_rgb(trace::EventKind kind);
inline uint32_t kind_color(trace::EventKind kind) { return pack_rgba(kind_rgb(kind)); }
// Blocks of merged tiny events: their dominant kind's colour (by time),
// darkened, the more the sparser the block (`density`: busy time / span, 0..1).
uint32_t merged_color(trace::EventKind kind, double density = 1.0);
constexpr Rgb kHighlightRgb{255, 40, 200};   // changed instructions in compare mode
constexpr Rgb kSelectionRgb{255, 255, 255};
constexpr Rgb kMeasureRgb{255, 210, 110};    // the measured range's edges and Δt label

}  // namespace sl::gui
