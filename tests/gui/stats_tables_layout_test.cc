// Where the Statistics tab puts its tables (app/gui/layout/stats_tables_layout.h).

#include "app/gui/layout/stats_tables_layout.h"

#include <gtest/gtest.h>

namespace sl::gui {
namespace {

TEST(StatsTablesLayout, SideBySideWhenEveryTableKeepsItsWidth) {
  StatsTablesLayout l = stats_tables_layout(1200, 1, true);
  EXPECT_FALSE(l.stacked);
  EXPECT_FLOAT_EQ(l.streams_width, 1200 * 0.22f);
  EXPECT_FLOAT_EQ(l.kernels_width, 1200 * 0.48f);
  EXPECT_FLOAT_EQ(l.longest_width, 0);  // the rest of the line
}

TEST(StatsTablesLayout, StackedAtFullWidthInA900By600Window) {
  // The bottom panel of a 900x600 window is about 600 px wide.
  StatsTablesLayout l = stats_tables_layout(600, 1, true);
  EXPECT_TRUE(l.stacked);
  EXPECT_FLOAT_EQ(l.streams_width, 600);
  EXPECT_FLOAT_EQ(l.kernels_width, 600);
  EXPECT_FLOAT_EQ(l.longest_width, 600);
}

TEST(StatsTablesLayout, ARangeHasNoStreamsTableAndNeedsLessWidth) {
  StatsTablesLayout range = stats_tables_layout(900, 1, false);
  EXPECT_FALSE(range.stacked);
  EXPECT_FLOAT_EQ(range.streams_width, 0);
  EXPECT_FLOAT_EQ(range.kernels_width, 900 * 0.6f);
  EXPECT_TRUE(stats_tables_layout(900, 1, true).stacked);
}

TEST(StatsTablesLayout, ALargerFontNeedsMoreWidth) {
  EXPECT_FALSE(stats_tables_layout(1200, 1, true).stacked);
  EXPECT_TRUE(stats_tables_layout(1200, 2, true).stacked);
  EXPECT_FALSE(stats_tables_layout(2400, 2, true).stacked);
}

}  // namespace
}  // namespace sl::gui
