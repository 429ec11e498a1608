// streamlens-gui end to end under Xvfb (skipped where xvfb-run is missing):
// screenshots of known runs checked pixel by pixel, a script that moves an
// instruction and reruns, compare mode, and the error exits.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/gui/layout/colors.h"
#include "app/gui/model/png_io.h"
#include "app/gui/model/services.h"
#include "tests/gui/gui_process_util.h"
#include "tests/gui/gui_test_util.h"

namespace sl::gui {
namespace {

using testing::known_streams;
using testing::known_trace;
using testing::save_trace;
using testing::ScratchDir;
using testing::have_xvfb;
using testing::near;
using testing::Outcome;
using testing::rows_with;
using testing::run_gui;

using testing::pixels_with;

class GuiApp : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_xvfb()) GTEST_SKIP() << "xvfb-run is not installed";
    if (!std::filesystem::exists(SL_GUI_EXECUTABLE)) GTEST_SKIP() << "streamlens-gui was not built";
    db_ = dir_.file("runs.db");
  }
  ScratchDir dir_;
  std::string db_;
};

TEST_F(GuiApp, ScreenshotShowsTheKnownTracks) {
  int64_t run = save_trace(db_, known_trace(), "", known_streams());
  std::string png = dir_.file("known.png");
  Outcome o = run_gui("--db " + db_ + " --run " + std::to_string(run) + " --screenshot " + png + " --size 1200x800");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto img = read_png(png);
  ASSERT_TRUE(img) << img.status().message();
  EXPECT_EQ(img->width, 1200);
  EXPECT_EQ(img->height, 800);
  // Track order (device, stream): stream 0 (GEMM, 0..1 ms), stream 1
  // (elementwise, 0.2..0.4 ms), comm 100 (all-gather, 0.1..0.9 ms).
  auto gemm = rows_with(*img, kind_rgb(trace::EventKind::kGemm), 250);
  auto elementwise = rows_with(*img, kind_rgb(trace::EventKind::kElementwise), 80);
  auto collective = rows_with(*img, kind_rgb(trace::EventKind::kCollective), 250);
  ASSERT_GE(gemm.size(), 10u) << "no GEMM track drawn";
  ASSERT_GE(elementwise.size(), 10u) << "no stream-1 track drawn";
  ASSERT_GE(collective.size(), 10u) << "no communication track drawn";
  EXPECT_LT(gemm.back(), elementwise.front());
  EXPECT_LT(elementwise.back(), collective.front());
  // One track each: the rows of a track are contiguous and about a track high.
  EXPECT_LE(gemm.back() - gemm.front(), 30);
  EXPECT_LE(collective.back() - collective.front(), 30);
}

TEST_F(GuiApp, ScriptMovesAnInstructionAndRerunsOnTheSimulator) {
  save_trace(db_, known_trace(), "", known_streams());
  RerunRequest first;
  first.db_path = db_;
  first.source_run = 1;
  first.backend = "sim";
  first.device_model = "h200";
  first.program_text = testing::kTwoDotsProgram;
  first.program_name = "two_dots";
  JobProgress progress;
  Result<int64_t> base = default_services().rerun(first, progress);
  ASSERT_TRUE(base) << base.status().message();

  std::string script = dir_.file("actions.txt");
  std::string shot = dir_.file("after.png");
  std::ofstream(script) << "set-stream b 1\nrerun sim\nwait-frames 2\nscreenshot " << shot << "\n";
  Outcome o = run_gui("--db " + db_ + " --run " + std::to_string(*base) + " --script " + script);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(std::filesystem::exists(shot));

  auto store = trace::TraceStore::open(db_, trace::TraceStore::Mode::kReadOnly);
  ASSERT_TRUE(store);
  auto runs = (*store)->list_runs();
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 3u);
  int64_t newest = 0;
  for (const auto& r : *runs) newest = std::max(newest, r.id);
  auto streams = (*store)->stream_assignment(newest);
  ASSERT_TRUE(streams);
  bool moved = false;
  for (const auto& s : *streams) moved |= s.instruction == "b" && s.stream == 1 && s.overridden;
  EXPECT_TRUE(moved);
}

// The Rerun button on a capture of a JAX program linked to its module: the
// simulator reruns the module on the capture's kernel times (the what-if for
// the real program), as `streamlens run --kernel-times` does.
TEST_F(GuiApp, ScriptRerunsALinkedCaptureOnItsKernelTimes) {
  const std::filesystem::path capture = std::filesystem::path(SL_SOURCE_DIR) / "tests/corpus/captures/mlp";
  const std::string import = std::string(SL_STREAMLENS) + " import " + (capture / "capture.jsonl").string() +
                             " --xla-dump " + capture.string() + " --db " + db_ + " >/dev/null 2>&1";
  if (std::system(import.c_str()) != 0) GTEST_SKIP() << "this streamlens reads no capture files";
  std::string script = dir_.file("rerun.txt");
  std::ofstream(script) << "set-stream wrapped_subtract 1\nrerun sim\nwait-frames 2\n";
  Outcome o = run_gui("--db " + db_ + " --run 1 --script " + script);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto store = trace::TraceStore::open(db_, trace::TraceStore::Mode::kReadOnly);
  ASSERT_TRUE(store);
  auto rerun = (*store)->run_info(2);
  ASSERT_TRUE(rerun) << rerun.status().message();
  EXPECT_EQ(rerun->device_model, "h200 + kernel times of run 1 (31 steps)");
  auto streams = (*store)->stream_assignment(2);
  ASSERT_TRUE(streams);
  bool moved = false;
  for (const auto& s : *streams) moved |= s.instruction == "wrapped_subtract" && s.stream == 1 && s.overridden;
  EXPECT_TRUE(moved);
}

// Suggest, then apply the best: the new run is the suggestion, simulated.
TEST_F(GuiApp, ScriptSuggestsAndAppliesTheBestOnTheSimulator) {
  std::ifstream in(std::string(SL_SOURCE_DIR) + "/samples/two_gemms_two_streams.hlo");
  std::stringstream text;
  text << in.rdbuf();
  save_trace(db_, known_trace(), "", known_streams());
  RerunRequest first;
  first.db_path = db_;
  first.source_run = 1;
  first.backend = "sim";
  first.device_model = "h200";
  first.program_text = text.str();
  first.program_name = "two_gemms_two_streams";
  JobProgress progress;
  Result<int64_t> base = default_services().rerun(first, progress);
  ASSERT_TRUE(base) << base.status().message();

  std::string script = dir_.file("suggest.txt");
  std::string shot = dir_.file("suggested.png");
  std::ofstream(script) << "suggest\napply-suggestion 1\nwait-frames 2\nscreenshot " << shot << "\n";
  Outcome o = run_gui("--db " + db_ + " --run " + std::to_string(*base) + " --script " + script);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(std::filesystem::exists(shot));

  auto store = trace::TraceStore::open(db_, trace::TraceStore::Mode::kReadOnly);
  ASSERT_TRUE(store);
  auto runs = (*store)->list_runs();
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 3u);
  trace::RunInfo original, applied;
  for (const auto& r : *runs) {
    if (r.id == *base) original = r;
    if (r.id > applied.id) applied = r;
  }
  // Both GEMMs on one stream: the best for two saturating GEMMs (samples/README.md).
  EXPECT_LT(applied.makespan_ns, original.makespan_ns);
  auto streams = (*store)->stream_assignment(applied.id);
  ASSERT_TRUE(streams);
  bool moved = false;
  for (const auto& s : *streams) moved |= s.instruction == "gemm1" && s.stream == 0 && s.overridden;
  EXPECT_TRUE(moved);
}

TEST_F(GuiApp, CompareOutlinesTheChangedInstruction) {
  int64_t a = save_trace(db_, known_trace(), "", known_streams(), "baseline");
  trace::Trace moved = known_trace();
  moved.events[2].stream = 2;
  int64_t b = save_trace(db_, moved, "", known_streams(), "moved");
  std::string png = dir_.file("compare.png");
  Outcome o = run_gui("--db " + db_ + " --run " + std::to_string(b) + " --compare " + std::to_string(a) +
                      " --screenshot " + png + " --size 1200x800");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto img = read_png(png);
  ASSERT_TRUE(img);
  EXPECT_GT(pixels_with(*img, kHighlightRgb), 40);
  // Both runs' GEMM tracks are drawn, aligned by (device, stream): the
  // baseline's stream 0 row right above the current's, two rows of GEMM.
  auto gemm = rows_with(*img, kind_rgb(trace::EventKind::kGemm), 250);
  ASSERT_FALSE(gemm.empty());
  EXPECT_GE(gemm.size(), 36u);
  EXPECT_LT(gemm.back() - gemm.front(), 60);
}

TEST_F(GuiApp, EmptyRunShowsAnEmptyTimeline) {
  int64_t run = save_trace(db_, trace::Trace{});
  std::string png = dir_.file("empty.png");
  Outcome o = run_gui("--db " + db_ + " --run " + std::to_string(run) + " --screenshot " + png);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(std::filesystem::exists(png));
}

TEST_F(GuiApp, BadInputsExitWithAMessage) {
  Outcome missing = run_gui("--db " + dir_.file("missing.db") + " --screenshot " + dir_.file("x.png"));
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("no such database"), std::string::npos) << missing.output;

  std::string junk = dir_.file("junk.db");
  std::ofstream(junk) << std::string(4096, 'x');
  Outcome corrupt = run_gui("--db " + junk + " --screenshot " + dir_.file("x.png"));
  EXPECT_EQ(corrupt.exit_code, 1) << corrupt.output;
  EXPECT_EQ(std::filesystem::file_size(junk), 4096u);  // left untouched

  save_trace(db_, known_trace());
  Outcome no_run = run_gui("--db " + db_ + " --run 42 --screenshot " + dir_.file("x.png"));
  EXPECT_EQ(no_run.exit_code, 1) << no_run.output;

  std::string script = dir_.file("bad.txt");
  std::ofstream(script) << "open-run 1\nfly away\n";
  Outcome bad_script = run_gui("--db " + db_ + " --script " + script);
  EXPECT_EQ(bad_script.exit_code, 2) << bad_script.output;
  EXPECT_NE(bad_script.output.find("bad.txt:2"), std::string::npos) << bad_script.output;

  Outcome bad_size = run_gui("--db " + db_ + " --size huge --screenshot " + dir_.file("x.png"));
  EXPECT_EQ(bad_size.exit_code, 2) << bad_size.output;

  std::ofstream(script) << "select nothing_like_this\n";
  Outcome bad_select = run_gui("--db " + db_ + " --script " + script);
  EXPECT_EQ(bad_select.exit_code, 1) << bad_select.output;
  EXPECT_NE(bad_select.output.find("nothing_like_this"), std::string::npos) << bad_select.output;
}

}  // namespace
}  // namespace sl::gui
