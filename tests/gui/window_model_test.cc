// The model side of the window basics and frictions of issue #22: no stale
// error after a good open, empty files refused, cpu reruns refused up front,
// reruns cancelled without waiting, programs grouped by computation, the
// export path, the startup database and the key queue.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "app/gui/model/app_state.h"
#include "app/gui/model/key_queue.h"
#include "app/gui/model/program_outline.h"
#include "app/gui/model/recent_files.h"
#include "core/hlo/parser.h"
#include "tests/gui/gui_test_util.h"

namespace sl::gui {
namespace {

using testing::known_streams;
using testing::known_trace;
using testing::save_trace;
using testing::ScratchDir;

std::string read_sample(const std::string& name) {
  std::ifstream in(std::string(SL_SOURCE_DIR) + "/samples/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A run of `program` saved with the stream assignment lowering gives it.
int64_t save_program_run(const std::string& db, const std::string& program, const std::string& name) {
  auto module = hlo::parse_program(program, name + ".hlo");
  EXPECT_TRUE(module) << module.status().message();
  if (!module) return 0;
  auto lowered = sched::lower(*module, sched::LowerOptions{});
  EXPECT_TRUE(lowered) << lowered.status().message();
  if (!lowered) return 0;
  return save_trace(db, known_trace(), program, lowered->streams, name, R"({"partitions":2})");
}

int64_t run_count(const std::string& db) {
  auto store = trace::TraceStore::open(db, trace::TraceStore::Mode::kReadOnly);
  if (!store) return -1;
  auto runs = (*store)->list_runs();
  return runs ? static_cast<int64_t>(runs->size()) : -1;
}

class WindowModel : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("runs.db");
    run_ = save_trace(db_, known_trace(), testing::kTwoDotsProgram, known_streams());
    state_.services = default_services();
  }
  void open_run(int64_t run) {
    apply(state_, OpenDatabase{db_});
    apply(state_, OpenRun{run});
    wait_for_job(state_);
    ASSERT_TRUE(state_.has_run()) << state_.message.text;
  }
  ScratchDir dir_;
  std::string db_;
  int64_t run_ = 0;
  AppState state_;
};

TEST_F(WindowModel, ASuccessfulOpenClearsTheEarlierError) {
  apply(state_, OpenDatabase{dir_.file("missing.db")});
  ASSERT_TRUE(state_.message.error);
  apply(state_, OpenDatabase{db_});
  EXPECT_FALSE(state_.message.error) << state_.message.text;
  EXPECT_NE(state_.message.text.find("opened"), std::string::npos) << state_.message.text;
}

TEST_F(WindowModel, AnEmptyFileIsRefusedAndLeftEmpty) {
  const std::string empty = dir_.file("empty.db");
  std::ofstream(empty).close();
  apply(state_, OpenDatabase{empty});
  EXPECT_TRUE(state_.message.error);
  EXPECT_NE(state_.message.text.find("empty file"), std::string::npos) << state_.message.text;
  EXPECT_EQ(state_.store, nullptr);
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);
}

TEST_F(WindowModel, ACpuRerunBoundToFailIsRefusedBeforeItStarts) {
  const int64_t einsum = save_program_run(db_, read_sample("windowed_einsum.hlo"), "windowed_einsum");
  open_run(einsum);
  const std::string why = rerun_refusal(state_, "cpu");
  EXPECT_NE(why.find("GFLOP"), std::string::npos) << why;
  EXPECT_NE(why.find("dot"), std::string::npos) << why;  // names the instruction
  EXPECT_EQ(rerun_refusal(state_, "sim"), "");
  const int64_t before = run_count(db_);
  apply(state_, Rerun{"cpu"});
  EXPECT_TRUE(state_.message.error);
  EXPECT_NE(state_.message.text.find("refused"), std::string::npos) << state_.message.text;
  EXPECT_FALSE(state_.job.active);
  EXPECT_EQ(run_count(db_), before);

  // The pipeline itself refuses too, before it records anything.
  RerunRequest request;
  request.db_path = db_;
  request.source_run = einsum;
  request.backend = "cpu";
  request.program_text = state_.current->program_text;
  request.program_name = "windowed_einsum";
  JobProgress progress;
  Result<int64_t> rerun = default_services().rerun(request, progress);
  ASSERT_FALSE(rerun);
  EXPECT_NE(rerun.status().message().find("GFLOP"), std::string::npos);
  EXPECT_EQ(run_count(db_), before);
}

TEST_F(WindowModel, ASmallProgramMayRerunOnTheCpu) {
  open_run(run_);
  EXPECT_EQ(rerun_refusal(state_, "cpu"), "");
}

// A rerun that records its run and then blocks until it is cancelled (as a
// long cpu operation would), then fails as the real pipeline does.
Result<int64_t> blocking_rerun(const RerunRequest& request, JobProgress& progress) {
  auto store = trace::TraceStore::open(request.db_path, trace::TraceStore::Mode::kOpenExisting);
  if (!store) return store.status();
  trace::RunInfo info;
  info.name = "blocking rerun";
  info.backend = request.backend;
  SL_ASSIGN_OR_RETURN(int64_t id, (*store)->begin_run(info, request.program_text, {}));
  progress.run_id = id;
  while (!progress.cancel) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  (void)(*store)->finish_run(id, trace::RunStatus::kFailed, 0, {{"backend_error", 1, "rerun cancelled"}});
  return runtime_error("rerun cancelled");
}

TEST_F(WindowModel, CancelFreesTheWindowAtOnceAndMarksTheRunInterrupted) {
  state_.services.rerun = blocking_rerun;
  open_run(run_);
  apply(state_, Rerun{"cpu"});
  ASSERT_TRUE(state_.job.active) << state_.message.text;
  const auto progress = state_.job.progress;
  while (progress->run_id == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const int64_t id = progress->run_id;

  apply(state_, CancelRerun{});
  EXPECT_FALSE(state_.job.active);  // no waiting for the worker
  EXPECT_FALSE(state_.message.error) << state_.message.text;
  EXPECT_NE(state_.message.text.find("interrupted"), std::string::npos) << state_.message.text;
  EXPECT_TRUE(progress->cancel);
  ASSERT_TRUE(state_.store->run_info(id));
  EXPECT_EQ(state_.store->run_info(id)->status, trace::RunStatus::kInterrupted);
  EXPECT_EQ(rerun_refusal(state_, "sim"), "");  // another rerun may start

  wait_for_job(state_);  // the worker's own failure keeps the mark, and is never opened
  EXPECT_TRUE(state_.cancelled_reruns.empty());
  EXPECT_EQ(state_.current->info.id, run_);
  EXPECT_EQ(state_.store->run_info(id)->status, trace::RunStatus::kInterrupted);
  auto store = trace::TraceStore::open(db_, trace::TraceStore::Mode::kReadOnly);
  ASSERT_TRUE(store);
  EXPECT_EQ((*store)->run_info(id)->status, trace::RunStatus::kInterrupted);

  apply(state_, CancelRerun{});  // nothing left to cancel
  EXPECT_TRUE(state_.message.error);
}

TEST_F(WindowModel, ACancelledRealRerunRecordsNothing) {
  RerunRequest request;
  request.db_path = db_;
  request.source_run = run_;
  request.backend = "cpu";
  request.program_text = testing::kTwoDotsProgram;
  request.program_name = "two_dots";
  JobProgress progress;
  progress.cancel = true;
  Result<int64_t> rerun = default_services().rerun(request, progress);
  ASSERT_FALSE(rerun);
  EXPECT_NE(rerun.status().message().find("cancelled"), std::string::npos);
  EXPECT_EQ(run_count(db_), 1);
}

TEST_F(WindowModel, RerunsNameTheirSource) {
  trace::RunInfo plain, rerun;
  rerun.config_json = R"({"backend":"sim","rerun_of":7})";
  plain.config_json = "{}";
  EXPECT_EQ(rerun_source(rerun), 7);
  EXPECT_EQ(rerun_source(plain), 0);
  EXPECT_EQ(rerun_source(trace::RunInfo{}), 0);
}

TEST(ProgramOutline, RepeatedNamesGetTheirComputation) {
  auto module = hlo::parse_program(read_sample("windowed_einsum.hlo"), "windowed_einsum.hlo");
  ASSERT_TRUE(module) << module.status().message();
  auto lowered = sched::lower(*module, sched::LowerOptions{});
  ASSERT_TRUE(lowered) << lowered.status().message();
  ProgramOutline outline = outline_program(*module, lowered->streams);
  ASSERT_EQ(outline.computations.size(), lowered->streams.size());
  std::vector<std::string> of_x, of_acc_next, of_result;
  for (size_t i = 0; i < lowered->streams.size(); ++i) {
    const std::string& name = lowered->streams[i].instruction;
    if (name == "x") of_x.push_back(outline.computations[i]);
    if (name == "acc.next") of_acc_next.push_back(outline.computations[i]);
    if (name == "result") of_result.push_back(outline.computations[i]);
  }
  // The entry's parameter x comes first, the loop body's get-tuple-element x after it.
  EXPECT_EQ(of_x, (std::vector<std::string>{"main", "windowed_body"}));
  EXPECT_EQ(of_acc_next, (std::vector<std::string>{"windowed_body"}));
  EXPECT_EQ(of_result, (std::vector<std::string>{"main"}));
  EXPECT_NE(outline.cpu_refusal.find("GFLOP"), std::string::npos);
}

TEST(ProgramOutline, CpuRefusalNamesOpaqueKernelsAndHugeArrays) {
  auto opaque = hlo::parse_program(R"(HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  ROOT k = f32[8] custom-call(p), custom_call_target="my_kernel"
}
)", "m.hlo");
  ASSERT_TRUE(opaque) << opaque.status().message();
  EXPECT_NE(cpu_refusal(*opaque).find("my_kernel"), std::string::npos);
  auto huge = hlo::parse_program(R"(HloModule m
ENTRY e {
  ROOT p = f32[16384,16384] parameter(0)
}
)", "m.hlo");
  ASSERT_TRUE(huge) << huge.status().message();
  EXPECT_NE(cpu_refusal(*huge).find("elements"), std::string::npos);
  auto small = hlo::parse_program(testing::kTwoDotsProgram, "two_dots.hlo");
  ASSERT_TRUE(small);
  EXPECT_EQ(cpu_refusal(*small), "");
}

TEST(ExportPath, RelativeNamesGoBesideTheDatabase) {
  EXPECT_EQ(export_path("/data/runs/x.db", "shot.png"), "/data/runs/shot.png");
  EXPECT_EQ(export_path("/data/runs/x.db", "../shot.png"), "/data/shot.png");
  EXPECT_EQ(export_path("/data/runs/x.db", "/tmp/a.png"), "/tmp/a.png");
  const std::string no_db = export_path("", "a.png");
  EXPECT_TRUE(std::filesystem::path(no_db).is_absolute()) << no_db;
}

TEST(StartupDatabase, PrefersTheLocalOneThenTheNewestRecentThatExists) {
  ScratchDir dir, other;
  const std::string recent_old = other.file("old.db"), recent_gone = other.file("gone.db");
  std::ofstream(recent_old) << "x";
  EXPECT_EQ(startup_database(dir.file(""), {recent_gone, recent_old}), recent_old);
  EXPECT_EQ(startup_database(dir.file(""), {recent_gone}), "");
  std::ofstream(dir.file("streamlens.db")) << "x";
  EXPECT_EQ(std::filesystem::path(startup_database(dir.file(""), {recent_old})).filename(), "streamlens.db");
}

TEST(KeyQueue, EveryTapActsEvenWhenSeveralArriveInOneFrame) {
  constexpr int kPress = 1, kRelease = 0, kS = 83, kD = 68;
  KeyQueue q;
  // Three taps of S and one of D, all between two frames.
  for (int i = 0; i < 3; ++i) {
    q.push({kS, 0, kPress, 0});
    q.push({kS, 0, kRelease, 0});
  }
  q.push({kD, 0, kPress, 0});
  q.push({kD, 0, kRelease, 0});
  int presses = 0, frames = 0;
  while (!q.empty() && frames < 100) {
    std::vector<KeyEvent> frame = q.take_frame();
    ASSERT_FALSE(frame.empty());
    for (size_t i = 0; i < frame.size(); ++i) {
      for (size_t j = i + 1; j < frame.size(); ++j) EXPECT_NE(frame[i].key, frame[j].key) << "frame " << frames;
      presses += frame[i].key == kS && frame[i].action == kPress;
    }
    ++frames;
  }
  EXPECT_EQ(presses, 3);
  EXPECT_EQ(frames, 7);  // S: press, release x3, the D press with the last S release, then D release
  EXPECT_TRUE(q.take_frame().empty());
}

}  // namespace
}  // namespace sl::gui
