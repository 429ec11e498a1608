#include "app/gui/layout/legend.h"

namespace sl::gui {

LegendLayout flow_legend(const std::vector<float>& widths, float avail_width, float gap_x, float line_height,
                         float gap_y) {
  LegendLayout out;
  out.spots.reserve(widths.size());
  float x = 0, y = 0;
  for (float w : widths) {
    if (out.lines == 0) {
      out.lines = 1;
    } else if (x > 0 && x + w > avail_width) {
      x = 0;
      y += line_height + gap_y;
      ++out.lines;
    }
    out.spots.push_back({x, y});
    x += w + gap_x;
  }
  out.height = out.lines == 0 ? 0 : y + line_height;
  return out;
}

}  // namespace sl::gui
