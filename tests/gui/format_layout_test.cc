// Labels that stay readable: achieved rates in a unit that fits their size,
// and the ruler's last label kept inside the ruler.

#include <gtest/gtest.h>

#include "app/gui/layout/rate_format.h"
#include "app/gui/layout/ruler.h"

namespace sl::gui {
namespace {

TEST(RateFormat, PicksThePrefixThatFits) {
  // 576 flops in 860 ns: shown as "0.0 TFLOP/s" before.
  EXPECT_EQ(format_rate(576 / 860e-9, "FLOP/s"), "670 MFLOP/s");
  EXPECT_EQ(format_rate(812.4e12, "FLOP/s"), "812 TFLOP/s");
  EXPECT_EQ(format_rate(1.2e12, "B/s"), "1.20 TB/s");
  EXPECT_EQ(format_rate(2.4e9, "B/s"), "2.40 GB/s");
  EXPECT_EQ(format_rate(45.6e3, "B/s"), "45.6 kB/s");
  EXPECT_EQ(format_rate(12, "B/s"), "12.0 B/s");
  EXPECT_EQ(format_rate(3.2e15, "FLOP/s"), "3.20 PFLOP/s");
}

TEST(Ruler, TheLastLabelTurnsLeftOfItsTickAtTheRightEdge) {
  EXPECT_EQ(ruler_label_x(100, 40, 600, 3), 103);
  // A tick at the right end (the view's last 60 µs): the label goes left of it.
  EXPECT_EQ(ruler_label_x(598, 40, 600, 3), 555);
  EXPECT_LE(ruler_label_x(598, 40, 600, 3) + 40, 600);
  EXPECT_EQ(ruler_label_x(557, 40, 600, 3), 560);  // exactly fits
}

}  // namespace
}  // namespace sl::gui
