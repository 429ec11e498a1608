// Model: script parsing, apply() on a real store, reruns off the UI thread
// (with a substitute pipeline and with the real parse/lower/sim one), PNG I/O.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "app/gui/model/app_state.h"
#include "app/gui/model/png_io.h"
#include "app/gui/model/script.h"
#include "tests/gui/gui_test_util.h"

namespace sl::gui {
namespace {

using testing::known_streams;
using testing::known_trace;
using testing::save_trace;
using testing::ScratchDir;

TEST(Script, ParsesEveryCommandIntoActions) {
  auto s = parse_script(
      "# a comment\n"
      "open-run 3\n"
      "set-stream %b 2\n"
      "set-stream ag0 comm\n"
      "\n"
      "rerun sim\n"
      "compare 1\n"
      "zoom 1.5 20\n"
      "select g0\n"
      "wait-frames 5\n"
      "screenshot out dir/x.png\n"
      "search all gather\n"
      "fit\n",
      "t.txt");
  ASSERT_TRUE(s) << s.status().message();
  ASSERT_EQ(s->size(), 11u);
  auto action = [&](size_t i) { return std::get<Action>((*s)[i].step); };
  EXPECT_EQ(std::get<OpenRun>(action(0)).run_id, 3);
  EXPECT_EQ((*s)[0].line, 2);
  EXPECT_EQ(std::get<SetStream>(action(1)).instruction, "b");
  EXPECT_EQ(std::get<SetStream>(action(1)).stream, 2);
  EXPECT_EQ(std::get<SetStream>(action(2)).stream, sched::kCommStreamBase);
  EXPECT_EQ(std::get<Rerun>(action(3)).backend, "sim");
  EXPECT_EQ(std::get<Compare>(action(4)).run_id, 1);
  EXPECT_EQ(std::get<ZoomTo>(action(5)).start_ns, 1500);
  EXPECT_EQ(std::get<ZoomTo>(action(5)).end_ns, 20000);
  EXPECT_EQ(std::get<SelectInstruction>(action(6)).name, "g0");
  EXPECT_EQ(std::get<WaitFrames>((*s)[7].step).frames, 5);
  EXPECT_EQ(std::get<Screenshot>((*s)[8].step).path, "out dir/x.png");
  EXPECT_EQ(std::get<Search>(action(9)).text, "all gather");
  EXPECT_TRUE(std::holds_alternative<FitAll>(action(10)));
  EXPECT_EQ(describe(action(1)), "set-stream b 2");
}

TEST(Script, ErrorsNameTheLine) {
  struct Case {
    const char* text;
    const char* fragment;
  };
  for (const Case& c : {Case{"open-run\n", "t.txt:1: error: 'open-run' takes one argument"},
                        Case{"fit\nopen-run x\n", "t.txt:2: error: run id"},
                        Case{"rerun gpu\n", "backend must be sim, cpu or cuda"},
                        Case{"zoom 5 1\n", "START_US < END_US"},
                        Case{"set-stream a -1\n", "stream must be"},
                        Case{"wait-frames many\n", "frame count"},
                        Case{"dance\n", "unknown command 'dance'"}}) {
    auto s = parse_script(c.text, "t.txt");
    ASSERT_FALSE(s) << c.text;
    EXPECT_EQ(s.status().code(), ErrorCode::kUsage);
    EXPECT_NE(s.status().message().find(c.fragment), std::string::npos) << s.status().message();
  }
  EXPECT_FALSE(parse_script_file("/nonexistent/script.txt"));
}

class ModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("runs.db");
    run_ = save_trace(db_, known_trace(), testing::kTwoDotsProgram, known_streams());
    state_.services = default_services();
  }
  ScratchDir dir_;
  std::string db_;
  int64_t run_ = 0;
  AppState state_;
};

TEST_F(ModelTest, OpenDatabaseErrorsLeaveAMessage) {
  apply(state_, OpenDatabase{dir_.file("missing.db")});
  EXPECT_TRUE(state_.message.error);
  EXPECT_NE(state_.message.text.find("no such database"), std::string::npos);
  EXPECT_EQ(state_.store, nullptr);
  testing::ScratchDir other;
  std::string junk = other.file("junk.db");
  FILE* f = std::fopen(junk.c_str(), "wb");
  std::fputs("this is not a database, just some text long enough to look like a header....", f);
  std::fclose(f);
  apply(state_, OpenDatabase{junk});
  EXPECT_TRUE(state_.message.error);
  EXPECT_EQ(state_.store, nullptr);
}

TEST_F(ModelTest, OpenRunLoadsTraceIndexStatsAndFits) {
  apply(state_, OpenDatabase{db_});
  ASSERT_FALSE(state_.message.error) << state_.message.text;
  ASSERT_EQ(state_.runs.size(), 1u);
  EXPECT_EQ(state_.recent_files.front(), db_);
  apply(state_, OpenRun{run_});
  wait_for_job(state_);
  ASSERT_TRUE(state_.has_run()) << state_.message.text;
  EXPECT_EQ(state_.current->trace.events.size(), 4u);
  EXPECT_EQ(state_.current->index.tracks.size(), 3u);
  EXPECT_EQ(state_.current->stats.makespan_ns, 1100000);
  EXPECT_EQ(state_.current->program_text, testing::kTwoDotsProgram);
  EXPECT_LE(state_.viewport.start_ns, 0);
  EXPECT_GE(state_.viewport.end_ns, 1100000);
  apply(state_, OpenRun{999});
  wait_for_job(state_);
  EXPECT_TRUE(state_.message.error);
  EXPECT_EQ(state_.current->info.id, run_);  // the open run stays
}

TEST_F(ModelTest, OpenRunLoadsOffTheUiThread) {
  apply(state_, OpenDatabase{db_});
  apply(state_, OpenRun{run_});
  // apply() returned at once; the run arrives through PollJob, once a frame.
  EXPECT_TRUE(state_.busy());
  EXPECT_FALSE(state_.has_run());
  EXPECT_FALSE(state_.message.error);
  apply(state_, OpenRun{run_});  // one load at a time
  EXPECT_TRUE(state_.message.error);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (state_.busy() && std::chrono::steady_clock::now() < deadline) {
    apply(state_, PollJob{});
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_FALSE(state_.busy());
  ASSERT_TRUE(state_.has_run()) << state_.message.text;
  EXPECT_FALSE(state_.message.error) << state_.message.text;
  EXPECT_EQ(state_.current->trace.events.size(), 4u);
  EXPECT_GT(state_.current->load_ms, 0);
}

TEST_F(ModelTest, ViewportActions) {
  apply(state_, OpenDatabase{db_});
  apply(state_, OpenRun{run_});
  wait_for_job(state_);
  apply(state_, ZoomTo{1000, 5000});
  EXPECT_EQ(state_.viewport.start_ns, 1000);
  EXPECT_EQ(state_.viewport.end_ns, 5000);
  apply(state_, Pan{-500});
  EXPECT_EQ(state_.viewport.start_ns, 500);
  apply(state_, ZoomAt{0.5, 2500});
  EXPECT_EQ(state_.viewport.span_ns(), 2000);
  apply(state_, FitAll{});
  EXPECT_GE(state_.viewport.end_ns, 1100000);
}

TEST_F(ModelTest, SelectionAndSearch) {
  apply(state_, OpenDatabase{db_});
  apply(state_, OpenRun{run_});
  wait_for_job(state_);
  const auto& t = state_.current->trace;
  apply(state_, SelectInstruction{"ag0"});
  ASSERT_GE(state_.selected, 0);
  EXPECT_EQ(t.instruction_of(t.events[static_cast<size_t>(state_.selected)]), "ag0");
  apply(state_, SelectInstruction{"nope"});
  EXPECT_TRUE(state_.message.error);
  apply(state_, Select{12345});
  EXPECT_EQ(state_.selected, -1);
  apply(state_, Search{"KERNEL"});  // add_kernel, neg_kernel: case-insensitive
  ASSERT_EQ(state_.search_hits.size(), 2u);
  apply(state_, SearchNext{1});
  EXPECT_EQ(t.name_of(t.events[static_cast<size_t>(state_.selected)]), "neg_kernel");  // earlier start
  apply(state_, SearchNext{1});
  EXPECT_EQ(t.name_of(t.events[static_cast<size_t>(state_.selected)]), "add_kernel");
  apply(state_, SearchNext{1});
  EXPECT_EQ(t.name_of(t.events[static_cast<size_t>(state_.selected)]), "neg_kernel");  // wraps
  // Selecting an event outside the view brings it into view at the same zoom.
  apply(state_, ZoomTo{0, 500000});
  apply(state_, SelectInstruction{"add1"});  // 1.0..1.1 ms: centred
  EXPECT_EQ(state_.viewport.span_ns(), 500000);
  EXPECT_LE(state_.viewport.start_ns, 1000000);
  EXPECT_GE(state_.viewport.end_ns, 1100000);
  apply(state_, ZoomTo{0, 1000});
  apply(state_, SelectInstruction{"add1"});  // wider than the view: fitted
  EXPECT_LE(state_.viewport.start_ns, 1000000);
  EXPECT_GE(state_.viewport.end_ns, 1100000);
  EXPECT_LT(state_.viewport.span_ns(), 200000);
}

TEST_F(ModelTest, StreamEditsOnlyForAsyncCapableInstructions) {
  apply(state_, OpenDatabase{db_});
  apply(state_, OpenRun{run_});
  wait_for_job(state_);
  apply(state_, SetStream{"p0", 1});
  EXPECT_TRUE(state_.message.error);
  EXPECT_TRUE(state_.edits.empty());
  apply(state_, SetStream{"missing", 1});
  EXPECT_TRUE(state_.message.error);
  apply(state_, SetStream{"g0", 2});
  EXPECT_FALSE(state_.message.error);
  EXPECT_EQ(effective_stream(state_, "g0"), 2);
  EXPECT_EQ(rerun_overrides(state_), (sched::StreamOverrides{{"g0", 2}}));
  apply(state_, SetStream{"g0", 0});  // back to its saved stream: no edit left
  EXPECT_TRUE(state_.edits.empty());
}

TEST_F(ModelTest, CompareFlagsChangedInstructions) {
  trace::Trace moved = known_trace();
  moved.events[2].stream = 2;
  int64_t second = save_trace(db_, moved, testing::kTwoDotsProgram, known_streams(), "moved");
  apply(state_, OpenDatabase{db_});
  apply(state_, OpenRun{second});
  wait_for_job(state_);
  apply(state_, Compare{second});
  wait_for_job(state_);
  EXPECT_TRUE(state_.message.error);  // not with itself
  apply(state_, Compare{run_});
  wait_for_job(state_);
  ASSERT_TRUE(state_.comparing()) << state_.message.text;
  EXPECT_EQ(state_.comparison->changed_count, 1);
  EXPECT_EQ(state_.comparison->current_changed[2], 1);
  // Made on the loader from the whole traces, taken over by the state.
  EXPECT_EQ(state_.baseline->comparison, nullptr);
  EXPECT_EQ(state_.current->comparison, nullptr);
  auto store = trace::TraceStore::open(db_, trace::TraceStore::Mode::kReadOnly);
  ASSERT_TRUE(store.is_ok());
  auto base = (*store)->load_trace(run_);
  auto current = (*store)->load_trace(second);
  ASSERT_TRUE(base.is_ok() && current.is_ok());
  const Comparison direct = compare_for_view(state_.baseline->info, *base, state_.current->info, *current);
  EXPECT_EQ(state_.comparison->base_event, direct.base_event);
  EXPECT_EQ(state_.comparison->current_event, direct.current_event);
  EXPECT_EQ(state_.comparison->changed, direct.changed);
  // Opening another current run while comparing compares it with the baseline too.
  apply(state_, OpenRun{second});
  wait_for_job(state_);
  ASSERT_TRUE(state_.comparing()) << state_.message.text;
  EXPECT_EQ(state_.comparison->changed_count, 1);
  apply(state_, CloseCompare{});
  EXPECT_FALSE(state_.comparing());
}

// A substitute pipeline: saves a copy of the source run's trace (with the
// overrides applied to stream numbers) from the worker thread.
Result<int64_t> fake_rerun(const RerunRequest& r, JobProgress& progress) {
  progress.phase = JobProgress::kRunning;
  for (int i = 1; i <= 5; ++i) {
    progress.total = 5;
    progress.done = i;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto store = trace::TraceStore::open(r.db_path, trace::TraceStore::Mode::kOpenExisting);
  if (!store) return store.status();
  SL_ASSIGN_OR_RETURN(trace::Trace t, (*store)->load_trace(r.source_run));
  std::vector<sched::StreamAssignmentEntry> streams = known_streams();
  for (auto& e : t.events) {
    auto it = r.overrides.find(t.instruction_of(e));
    if (it != r.overrides.end()) e.stream = it->second;
  }
  for (auto& s : streams) {
    auto it = r.overrides.find(s.instruction);
    if (it != r.overrides.end()) {
      s.stream = it->second;
      s.overridden = true;
    }
  }
  trace::RunInfo info;
  info.name = "rerun";
  info.backend = r.backend;
  return (*store)->save_run(info, r.program_text, streams, t);
}

TEST_F(ModelTest, RerunRunsOffTheUiThreadAndOpensTheNewRun) {
  state_.services.rerun = fake_rerun;
  apply(state_, OpenDatabase{db_});
  apply(state_, OpenRun{run_});
  wait_for_job(state_);
  apply(state_, SetStream{"n0", 3});
  apply(state_, Rerun{"sim"});
  ASSERT_TRUE(state_.busy()) << state_.message.text;
  apply(state_, Rerun{"sim"});  // a second one is refused while the first runs
  EXPECT_TRUE(state_.message.error);
  EXPECT_TRUE(state_.busy());
  // The UI keeps polling (frames keep coming) until the job is done.
  int frames = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (state_.busy() && std::chrono::steady_clock::now() < deadline) {
    apply(state_, PollJob{});
    ++frames;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_FALSE(state_.busy());
  EXPECT_GT(frames, 5);  // apply() never blocked on the job
  ASSERT_FALSE(state_.message.error) << state_.message.text;
  EXPECT_EQ(state_.runs.size(), 2u);
  ASSERT_TRUE(state_.has_run());
  EXPECT_NE(state_.current->info.id, run_);
  EXPECT_TRUE(state_.edits.empty());
  EXPECT_EQ(effective_stream(state_, "n0"), 3);  // saved with the new run
  EXPECT_EQ(rerun_overrides(state_), (sched::StreamOverrides{{"n0", 3}}));
}

TEST_F(ModelTest, FailedRerunReportsAndFreesTheJob) {
  state_.services.rerun = [](const RerunRequest&, JobProgress&) -> Result<int64_t> {
    return runtime_error("device on fire");
  };
  apply(state_, OpenDatabase{db_});
  apply(state_, OpenRun{run_});
  wait_for_job(state_);
  apply(state_, Rerun{"cpu"});
  wait_for_job(state_);
  EXPECT_FALSE(state_.busy());
  EXPECT_TRUE(state_.message.error);
  EXPECT_NE(state_.message.text.find("device on fire"), std::string::npos);
  EXPECT_EQ(state_.current->info.id, run_);
}

TEST_F(ModelTest, UnavailableBackendIsRefusedWithItsReason) {
  state_.services.unavailable_reason = [](const std::string& b) { return b == "cuda" ? std::string("no GPU") : ""; };
  apply(state_, OpenDatabase{db_});
  apply(state_, OpenRun{run_});
  wait_for_job(state_);
  apply(state_, Rerun{"cuda"});
  EXPECT_FALSE(state_.busy());
  EXPECT_NE(state_.message.text.find("no GPU"), std::string::npos);
#ifndef SL_HAVE_CUDA
  EXPECT_FALSE(default_services().unavailable_reason("cuda").empty());
#endif
  EXPECT_TRUE(default_services().unavailable_reason("sim").empty());
}

// The real pipeline: parse the stored program, lower with the edit, simulate, save.
TEST_F(ModelTest, RealSimRerunSavesTheOverride) {
  // A first run straight from the pipeline, so its stream assignment is the lowering's.
  RerunRequest first;
  first.db_path = db_;
  first.source_run = run_;
  first.backend = "sim";
  first.device_model = "h200";
  first.program_text = testing::kTwoDotsProgram;
  first.program_name = "two_dots";
  JobProgress progress;
  Result<int64_t> base = default_services().rerun(first, progress);
  ASSERT_TRUE(base) << base.status().message();
  EXPECT_EQ(progress.phase.load(), JobProgress::kDone);

  apply(state_, OpenDatabase{db_});
  apply(state_, OpenRun{*base});
  wait_for_job(state_);
  ASSERT_TRUE(state_.has_run()) << state_.message.text;
  EXPECT_EQ(effective_stream(state_, "b"), 0);
  apply(state_, SetStream{"b", 1});
  ASSERT_FALSE(state_.message.error) << state_.message.text;
  apply(state_, Rerun{"sim"});
  ASSERT_TRUE(state_.busy()) << state_.message.text;
  wait_for_job(state_);
  ASSERT_FALSE(state_.message.error) << state_.message.text;
  const LoadedRun& run = *state_.current;
  EXPECT_NE(run.info.id, *base);
  EXPECT_EQ(run.info.backend, "sim");
  EXPECT_FALSE(run.trace.events.empty());
  bool found = false;
  for (const auto& s : run.streams) {
    if (s.instruction == "b") {
      found = true;
      EXPECT_EQ(s.stream, 1);
      EXPECT_TRUE(s.overridden);
    }
  }
  EXPECT_TRUE(found);
  bool on_stream_1 = false;
  for (const auto& e : run.trace.events) on_stream_1 |= e.stream == 1;
  EXPECT_TRUE(on_stream_1);
}

TEST(PngIo, WriteReadRoundTripAndFlip) {
  ScratchDir dir;
  Image img;
  img.width = 3;
  img.height = 2;
  img.rgba = {1, 2, 3, 255, 4, 5, 6, 255, 7, 8, 9, 255, 10, 11, 12, 255, 13, 14, 15, 255, 16, 17, 18, 255};
  flip_rows(img);
  EXPECT_EQ(img.pixel(0, 0)[0], 10);
  ASSERT_TRUE(write_png(dir.file("x.png"), img).is_ok());
  auto back = read_png(dir.file("x.png"));
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(back->width, 3);
  EXPECT_EQ(back->rgba, img.rgba);
  EXPECT_FALSE(read_png(dir.file("missing.png")));
  EXPECT_FALSE(write_png(dir.file("no/such/dir.png"), img).is_ok());
}

}  // namespace
}  // namespace sl::gui
