// Issue 22's visual parts under Xvfb (skipped where xvfb-run is missing):
// the persistent measured range, the overview strip above the ruler, a
// statistics row's reveal (the selection outline), checked in script-mode
// screenshots.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "app/gui/layout/colors.h"
#include "app/gui/model/png_io.h"
#include "tests/gui/gui_process_util.h"
#include "tests/gui/gui_test_util.h"

namespace sl::gui {
namespace {

using testing::columns_with;
using testing::have_xvfb;
using testing::rows_with;
using testing::run_gui;


class MeasureApp : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_xvfb()) GTEST_SKIP() << "xvfb-run is not installed";
    if (!std::filesystem::exists(SL_GUI_EXECUTABLE)) GTEST_SKIP() << "streamlens-gui was not built";
    db_ = dir_.file("runs.db");
    run_ = testing::save_trace(db_, testing::known_trace(), "", testing::known_streams());
  }
  // Runs `script` on the known run; returns the screenshot it ends with.
  Result<Image> shot(const std::string& script) {
    const std::string png = dir_.file("shot.png"), file = dir_.file("script.txt");
    std::ofstream(file) << script << "wait-frames 2\nscreenshot " << png << "\n";
    auto [code, output] = run_gui("--db " + db_ + " --run " + std::to_string(run_) + " --script " + file +
                                  " --size 1200x800");
    EXPECT_EQ(code, 0) << output;
    return read_png(png);
  }
  testing::ScratchDir dir_;
  std::string db_;
  int64_t run_ = 0;
};

TEST_F(MeasureApp, MeasuredRangeStaysOnScreenWithItsEdges) {
  auto plain = shot("");
  ASSERT_TRUE(plain) << plain.status().message();
  EXPECT_TRUE(columns_with(*plain, kMeasureRgb, 200).empty());
  // 200..600 µs of the 0..1.1 ms run: two edges, 2 px each, far apart.
  auto measured = shot("measure 200 600\nwait-frames 2\nzoom 0 1100\n");
  ASSERT_TRUE(measured) << measured.status().message();
  std::vector<int> edges = columns_with(*measured, kMeasureRgb, 200);
  ASSERT_GE(edges.size(), 2u);
  EXPECT_LE(edges.size(), 6u);
  // 400 µs of the 1.1 ms view over the ~640 px track area (1200 px less the
  // side panel and track labels): ~230 px.
  EXPECT_GT(edges.back() - edges.front(), 180);
  EXPECT_LT(edges.back() - edges.front(), 300);
  // Cleared, it is gone.
  auto cleared = shot("measure 200 600\nclear-measure\n");
  ASSERT_TRUE(cleared);
  EXPECT_TRUE(columns_with(*cleared, kMeasureRgb, 200).empty());
}

TEST_F(MeasureApp, OverviewStripShowsTheWholeRunAboveTheTracks) {
  // Zoomed into add1 (1.0..1.1 ms, after the GEMM), no track shows the GEMM,
  // but the overview (the whole run) still does, above the tracks.
  auto img = shot("zoom 1010 1090\n");
  ASSERT_TRUE(img) << img.status().message();
  std::vector<int> gemm_rows = rows_with(*img, kind_rgb(trace::EventKind::kGemm), 200);
  ASSERT_FALSE(gemm_rows.empty()) << "no overview bars of the GEMM";
  std::vector<int> add = rows_with(*img, kind_rgb(trace::EventKind::kElementwise), 400);
  ASSERT_FALSE(add.empty());
  EXPECT_LT(gemm_rows.back(), add.front());
  EXPECT_LE(gemm_rows.back() - gemm_rows.front(), 26);  // the strip's height, not a track
}

TEST_F(MeasureApp, RevealingTheLongestKernelSelectsIt) {
  auto before = shot("zoom 1000 1100\n");
  ASSERT_TRUE(before);
  // The 0..1 ms GEMM is out of a 1.0..1.1 ms view; revealing it (as a click on
  // the longest-kernels row does) brings it in and outlines it.
  auto after = shot("zoom 1000 1100\nreveal-longest 1\n");
  ASSERT_TRUE(after);
  auto gemm_before = rows_with(*before, kind_rgb(trace::EventKind::kGemm), 400);
  auto gemm_after = rows_with(*after, kind_rgb(trace::EventKind::kGemm), 400);
  EXPECT_LT(gemm_before.size(), gemm_after.size());
  EXPECT_FALSE(rows_with(*after, kSelectionRgb, 400).empty()) << "no selection outline";
}

}  // namespace
}  // namespace sl::gui
