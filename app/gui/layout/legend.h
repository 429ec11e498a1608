#pragma once
// The timeline's colour legend as a flow layout: items left to right,
// wrapping to a new line when the next one would pass the right edge, so a
// narrow timeline (a 900x600 window, or a large --font-scale) shows every
// entry instead of clipping the last ones.

#include <vector>

namespace sl::gui {

struct LegendSpot {
  float x = 0, y = 0;  // top-left, relative to the legend's origin
};

struct LegendLayout {
  std::vector<LegendSpot> spots;  // one per item, in order
  float height = 0;               // of all lines together
  int lines = 0;
};

// `widths`: each item's width; items are `gap_x` apart on a line and lines
// `line_height + gap_y` apart. An item wider than `avail_width` gets a line
// of its own.
LegendLayout flow_legend(const std::vector<float>& widths, float avail_width, float gap_x, float line_height,
                         float gap_y);

}  // namespace sl::gui
