// Script-mode screenshots of the layout at a font scale and in a small
// window (issue #22; skipped where xvfb-run is missing): the legend shows
// every entry at 900x600, and tracks grow with --font-scale.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "app/gui/layout/colors.h"
#include "app/gui/model/png_io.h"
#include "tests/gui/gui_process_util.h"
#include "tests/gui/gui_test_util.h"

namespace sl::gui {
namespace {

using testing::have_xvfb;
using testing::known_streams;
using testing::known_trace;
using testing::near;
using testing::Outcome;
using testing::rows_with;
using testing::run_gui;
using testing::save_trace;
using testing::ScratchDir;

using testing::pixels_with;

// Length of the lowest run of consecutive rows in `rows` (sorted).
int last_run_length(const std::vector<int>& rows) {
  if (rows.empty()) return 0;
  int length = 1;
  for (size_t i = rows.size() - 1; i > 0 && rows[i - 1] == rows[i] - 1; --i) ++length;
  return length;
}

class ScaleApp : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_xvfb()) GTEST_SKIP() << "xvfb-run is not installed";
    if (!std::filesystem::exists(SL_GUI_EXECUTABLE)) GTEST_SKIP() << "streamlens-gui was not built";
    db_ = dir_.file("runs.db");
    run_ = save_trace(db_, known_trace(), "", known_streams());
  }
  Result<Image> screenshot(const std::string& name, const std::string& extra) {
    const std::string png = dir_.file(name);
    Outcome o = run_gui("--db " + db_ + " --run " + std::to_string(run_) + " --screenshot " + png + " " + extra);
    EXPECT_EQ(o.exit_code, 0) << o.output;
    return read_png(png);
  }
  ScratchDir dir_;
  std::string db_;
  int64_t run_ = 0;
};

// The known run has no copy, memset, wait or other kernels and no merged
// blocks: those colours are the legend's swatches alone. The last entries
// of a one-line legend were cut off at 900x600.
TEST_F(ScaleApp, TheLegendShowsEveryEntryAt900x600) {
  for (const char* scale : {"1", "1.5"}) {
    auto img = screenshot(std::string("legend_") + scale + ".png", std::string("--size 900x600 --font-scale ") + scale);
    ASSERT_TRUE(img) << img.status().message();
    const int swatch = 13 * 13 * 3 / 4;
    for (auto kind : {trace::EventKind::kCopy, trace::EventKind::kMemset, trace::EventKind::kWait,
                      trace::EventKind::kOther}) {
      EXPECT_GE(pixels_with(*img, kind_rgb(kind)), swatch)
          << "scale " << scale << ": no legend swatch for " << trace::event_kind_name(kind);
    }
    EXPECT_GE(pixels_with(*img, unpack_rgb(merged_color(trace::EventKind::kGemm, 0.2))), swatch / 2)
        << "scale " << scale << ": no legend swatch for merged blocks";
  }
}

// A track (its GEMM rows) is twice as tall at --font-scale 2 as at 1.
TEST_F(ScaleApp, TracksGrowWithTheFontScale) {
  auto one = screenshot("scale1.png", "--size 1600x900");
  auto two = screenshot("scale2.png", "--size 1600x900 --font-scale 2");
  ASSERT_TRUE(one && two);
  const Rgb gemm = kind_rgb(trace::EventKind::kGemm);
  const int h1 = last_run_length(rows_with(*one, gemm, 400));
  const int h2 = last_run_length(rows_with(*two, gemm, 400));
  EXPECT_GE(h1, 18);
  EXPECT_LE(h1, 22);
  EXPECT_GE(h2, 2 * h1 - 2) << h1 << " rows at scale 1, " << h2 << " at scale 2";
  EXPECT_LE(h2, 2 * h1 + 4) << h1 << " rows at scale 1, " << h2 << " at scale 2";
}

// The compare heading names both runs; with long names in a 900x600 window
// it takes two lines instead of running off the timeline's right edge. The
// toolbar's "comparing run 3 (current) with run 2 ..." message is shortened
// to end before its "x" button instead of running off the window.
TEST_F(ScaleApp, CompareFitsANarrowWindow) {
  const int64_t base = save_trace(db_, known_trace(), "", known_streams(), "baseline_with_a_rather_long_name");
  trace::Trace moved = known_trace();
  moved.events[2].stream = 2;
  const int64_t current = save_trace(db_, moved, "", known_streams(), "moved_with_an_even_longer_run_name");
  const std::string png = dir_.file("compare.png");
  Outcome o = run_gui("--db " + db_ + " --run " + std::to_string(current) + " --compare " + std::to_string(base) +
                      " --size 900x600 --screenshot " + png);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto img = read_png(png);
  ASSERT_TRUE(img) << img.status().message();
  // The heading's orange, exactly (the pixel font is not anti-aliased at scale 1).
  std::vector<int> rows = rows_with(*img, Rgb{255, 200, 120}, 1);
  ASSERT_FALSE(rows.empty()) << "no compare heading drawn";
  EXPECT_GT(rows.back() - rows.front(), 13) << "the heading is one line: cut off at the right";
  // The tracks start below it: the GEMM rows (both runs') are under the heading's last line.
  std::vector<int> gemm = rows_with(*img, kind_rgb(trace::EventKind::kGemm), 250);
  ASSERT_FALSE(gemm.empty());
  EXPECT_GT(gemm.front(), rows.back());
  std::vector<int> message = testing::columns_with(*img, Rgb{153, 229, 153}, 1);
  ASSERT_FALSE(message.empty()) << "no message in the toolbar";
  EXPECT_LT(message.back(), img->width - 15) << "the message runs to the window's edge, over its x button";
}

}  // namespace
}  // namespace sl::gui
