#include "app/gui/layout/timeline_metrics.h"

#include <algorithm>
#include <cmath>

namespace sl::gui {

TimelineMetrics timeline_metrics(float scale) {
  const TimelineMetrics base;
  const float s = std::max(1.0f, scale);
  auto px = [s](float v) { return std::round(v * s); };
  TimelineMetrics m;
  m.scale = s;
  m.label_width = px(base.label_width);
  m.ruler_height = px(base.ruler_height);
  m.overview_height = px(base.overview_height);
  m.track_height = px(base.track_height);
  m.track_gap = px(base.track_gap);
  m.section_height = px(base.section_height);
  m.text_pad = px(base.text_pad);
  m.splitter = px(base.splitter);
  m.arrow_head = px(base.arrow_head);
  m.arrow_reach = px(base.arrow_reach);
  m.line_width = px(base.line_width);
  m.step_label_gap = px(base.step_label_gap);
  m.search_width = px(base.search_width);
  return m;
}

float centred_text_y(float row_height, float text_height) {
  return std::max(0.0f, std::floor((row_height - text_height) / 2));
}

}  // namespace sl::gui
