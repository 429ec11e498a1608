#pragma once
// The timeline's and the window's fixed pixel sizes at a font/DPI scale
// (--font-scale times the monitor's content scale): tracks must stay taller
// than a line of the scaled font, labels wider than its names, and the
// splitters and markers big enough to hit and see. Whole pixels, so edges
// stay crisp.

namespace sl::gui {

struct TimelineMetrics {
  float scale = 1;
  float label_width = 150;     // the track names left of the events
  float ruler_height = 26;
  float overview_height = 26;
  float track_height = 22;
  float track_gap = 3;
  float section_height = 20;   // a compare heading above the tracks
  float text_pad = 4;          // text inset inside a track, the ruler and the overview
  float splitter = 6;          // the draggable gap between panels
  float arrow_head = 8;        // wait arrows: head length (its half-width is half that)
  float arrow_reach = 30;      // wait arrows: how far the curve leaves sideways
  float line_width = 2;        // selection, highlight and measure edges
  float step_label_gap = 60;   // step numbers on the ruler at least this far apart
  float search_width = 220;    // the toolbar's search field
};

// Sizes at `scale` (values below 1 count as 1); the defaults above are scale 1.
TimelineMetrics timeline_metrics(float scale);

// Top of a line of text `text_height` tall centred in a row `row_height` tall.
float centred_text_y(float row_height, float text_height);

}  // namespace sl::gui
