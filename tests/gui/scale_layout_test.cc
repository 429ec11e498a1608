// Layout at a font scale and in narrow windows (issue #22): the timeline's
// pixel sizes follow --font-scale, and the legend wraps instead of clipping.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/gui/layout/legend.h"
#include "app/gui/layout/timeline_metrics.h"
#include "core/trace/trace.h"

namespace sl::gui {
namespace {

TEST(TimelineMetrics, ScaleOneKeepsTheOriginalSizes) {
  const TimelineMetrics m = timeline_metrics(1);
  EXPECT_EQ(m.track_height, 22);
  EXPECT_EQ(m.ruler_height, 26);
  EXPECT_EQ(m.label_width, 150);
  EXPECT_EQ(m.splitter, 6);
  EXPECT_EQ(m.arrow_head, 8);
  EXPECT_EQ(m.line_width, 2);
}

TEST(TimelineMetrics, ScaleTwoDoublesEverySize) {
  const TimelineMetrics one = timeline_metrics(1), two = timeline_metrics(2);
  EXPECT_EQ(two.scale, 2);
  EXPECT_EQ(two.track_height, 2 * one.track_height);
  EXPECT_EQ(two.track_gap, 2 * one.track_gap);
  EXPECT_EQ(two.ruler_height, 2 * one.ruler_height);
  EXPECT_EQ(two.overview_height, 2 * one.overview_height);
  EXPECT_EQ(two.section_height, 2 * one.section_height);
  EXPECT_EQ(two.label_width, 2 * one.label_width);
  EXPECT_EQ(two.splitter, 2 * one.splitter);
  EXPECT_EQ(two.arrow_head, 2 * one.arrow_head);
  EXPECT_EQ(two.arrow_reach, 2 * one.arrow_reach);
  EXPECT_EQ(two.line_width, 2 * one.line_width);
  EXPECT_EQ(two.text_pad, 2 * one.text_pad);
  EXPECT_EQ(two.step_label_gap, 2 * one.step_label_gap);
  EXPECT_EQ(two.search_width, 2 * one.search_width);
}

TEST(TimelineMetrics, TracksStayTallerThanTheScaledFontInWholePixels) {
  for (float scale : {1.0f, 1.25f, 1.5f, 2.0f, 3.0f}) {
    const TimelineMetrics m = timeline_metrics(scale);
    const float font = 13 * scale;  // the GUI's font size at this scale
    EXPECT_GT(m.track_height, font + 2) << scale;
    EXPECT_GE(m.ruler_height, 2 * font) << scale;  // the span and the "+ from" line
    EXPECT_EQ(m.track_height, static_cast<float>(static_cast<int>(m.track_height))) << scale;
    EXPECT_EQ(m.line_width, static_cast<float>(static_cast<int>(m.line_width))) << scale;
    const float y = centred_text_y(m.track_height, font);
    EXPECT_GE(y, 0) << scale;
    EXPECT_LE(y + font, m.track_height) << scale;
  }
  // Smaller than 1 is not a scale the window uses: the sizes stay readable.
  EXPECT_EQ(timeline_metrics(0.5f).track_height, 22);
  EXPECT_EQ(centred_text_y(22, 13), 4);
  EXPECT_EQ(centred_text_y(10, 13), 0);
}

// The legend's entries at the default font (7 px a character, a 13 px swatch).
std::vector<float> legend_widths(float scale) {
  std::vector<std::string> names;
  for (int k = 0; k <= static_cast<int>(trace::EventKind::kOther); ++k) {
    names.push_back(trace::event_kind_name(static_cast<trace::EventKind>(k)));
  }
  names.push_back("merged: main kind, darker = sparser");
  std::vector<float> widths;
  for (const std::string& n : names) widths.push_back(scale * (13 + 4 + 7 * static_cast<float>(n.size())));
  return widths;
}

void expect_inside(const LegendLayout& l, const std::vector<float>& widths, float avail) {
  ASSERT_EQ(l.spots.size(), widths.size());
  for (size_t i = 0; i < widths.size(); ++i) {
    EXPECT_GE(l.spots[i].x, 0) << i;
    EXPECT_LE(l.spots[i].x + widths[i], avail) << "legend item " << i << " passes the right edge";
    EXPECT_LT(l.spots[i].y, l.height) << i;
  }
}

TEST(Legend, OneLineWhenItFits) {
  const std::vector<float> w = legend_widths(1);
  LegendLayout l = flow_legend(w, 2000, 13, 13, 4);
  EXPECT_EQ(l.lines, 1);
  EXPECT_EQ(l.height, 13);
  for (size_t i = 1; i < w.size(); ++i) {
    EXPECT_EQ(l.spots[i].y, 0);
    EXPECT_EQ(l.spots[i].x, l.spots[i - 1].x + w[i - 1] + 13);
  }
}

// The timeline of a 900x600 window is about 600 px wide: the legend of one
// line (about 800 px) used to lose its last entries there.
TEST(Legend, WrapsInTheTimelineOfA900x600Window) {
  const std::vector<float> w = legend_widths(1);
  LegendLayout l = flow_legend(w, 600, 13, 13, 4);
  EXPECT_GE(l.lines, 2);
  EXPECT_EQ(l.height, static_cast<float>(l.lines) * 13 + static_cast<float>(l.lines - 1) * 4);
  expect_inside(l, w, 600);
  // In order: reading left to right, top to bottom.
  for (size_t i = 1; i < w.size(); ++i) {
    EXPECT_TRUE(l.spots[i].y > l.spots[i - 1].y || l.spots[i].x > l.spots[i - 1].x) << i;
  }
}

TEST(Legend, WrapsAtFontScaleTwo) {
  const std::vector<float> w = legend_widths(2);
  LegendLayout l = flow_legend(w, 1100, 26, 26, 8);
  EXPECT_GE(l.lines, 2);
  expect_inside(l, w, 1100);
}

TEST(Legend, AnEntryWiderThanTheSpaceGetsItsOwnLine) {
  LegendLayout l = flow_legend({50, 500, 50}, 200, 10, 13, 4);
  EXPECT_EQ(l.lines, 3);
  EXPECT_EQ(l.spots[1].x, 0);
  EXPECT_EQ(l.spots[2].x, 0);
  EXPECT_EQ(l.spots[2].y, 34);
  EXPECT_EQ(flow_legend({}, 200, 10, 13, 4).height, 0);
}

}  // namespace
}  // namespace sl::gui
