// The GUI's Suggest action: script lines, the search on a worker thread,
// and "apply" rerunning exactly the suggestion on the simulator and opening
// the comparison (with a substitute search and with the real one).

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "app/gui/model/app_state.h"
#include "app/gui/model/script.h"
#include "tests/gui/gui_test_util.h"

namespace sl::gui {
namespace {

using testing::known_streams;
using testing::known_trace;
using testing::save_trace;
using testing::ScratchDir;

TEST(SuggestScript, ParsesSuggestAndApplySuggestion) {
  auto s = parse_script("suggest\nsuggest 300\napply-suggestion 2\n", "t.txt");
  ASSERT_TRUE(s) << s.status().message();
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ(describe(std::get<Action>((*s)[0].step)), "suggest 2000");
  EXPECT_EQ(describe(std::get<Action>((*s)[1].step)), "suggest 300");
  EXPECT_EQ(describe(std::get<Action>((*s)[2].step)), "apply-suggestion 2");
  for (const char* bad : {"suggest 0\n", "suggest x\n", "suggest 1 2\n", "apply-suggestion\n", "apply-suggestion 0\n"}) {
    auto r = parse_script(bad, "t.txt");
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_NE(r.status().message().find("t.txt:1: error:"), std::string::npos) << r.status().message();
    }
  }
}

class SuggestModel : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("runs.db");
    // The run overrode n0; a suggestion that does not move it must put it back.
    std::vector<sched::StreamAssignmentEntry> streams = known_streams();
    streams[2].overridden = true;
    run_ = save_trace(db_, known_trace(), testing::kTwoDotsProgram, streams, "known",
                      R"({"replicas": 1, "partitions": 1})");
    state_.services = default_services();
  }
  ScratchDir dir_;
  std::string db_;
  int64_t run_ = 0;
  AppState state_;
};

Result<SuggestOutcome> fake_suggest(const SuggestRequest& r, JobProgress& progress) {
  for (int i = 1; i <= 5; ++i) {
    progress.total = 5;
    progress.done = i;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  SuggestOutcome o;
  o.source_run = r.source_run;
  o.device_model = r.device_model;
  o.original_makespan_ns = 1000;
  o.candidates = {{{{"g0", 1}}, 16, 800}, {{{"add1", 2}}, 32, 900}};
  o.simulations = 5;
  for (const std::string& name : r.saved_overrides) o.program_streams[name] = 0;
  return o;
}

TEST_F(SuggestModel, SearchRunsOffTheUiThreadAndApplyRerunsExactlyTheSuggestion) {
  state_.services.suggest = fake_suggest;
  RerunRequest seen;
  state_.services.rerun = [this, &seen](const RerunRequest& r, JobProgress&) -> Result<int64_t> {
    seen = r;
    return save_trace(db_, known_trace(), r.program_text, known_streams(), "applied");
  };
  apply(state_, OpenDatabase{db_});
  apply(state_, ApplySuggestion{1});
  EXPECT_TRUE(state_.message.error);  // nothing to apply yet
  apply(state_, OpenRun{run_});
  wait_for_job(state_);
  apply(state_, Suggest{});
  ASSERT_TRUE(state_.suggest.active) << state_.message.text;
  int frames = 0;
  while (state_.busy()) {
    apply(state_, PollJob{});
    ++frames;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GT(frames, 5);  // apply() never blocked on the search
  ASSERT_TRUE(state_.suggestions.has_value()) << state_.message.text;
  EXPECT_NE(state_.message.text.find("--stream g0=1 --comm-sms 16"), std::string::npos) << state_.message.text;

  apply(state_, ApplySuggestion{3});
  EXPECT_TRUE(state_.message.error);
  apply(state_, ApplySuggestion{1});
  ASSERT_FALSE(state_.message.error) << state_.message.text;
  wait_for_job(state_);
  EXPECT_EQ(seen.backend, "sim");
  EXPECT_EQ(seen.device_model, "h200");
  EXPECT_EQ(seen.comm_sms, 16);
  EXPECT_EQ(seen.overrides, (sched::StreamOverrides{{"g0", 1}, {"n0", 0}}));
  // The new run is open and compared with the run the suggestion was found for.
  ASSERT_TRUE(state_.has_run());
  EXPECT_NE(state_.current->info.id, run_);
  ASSERT_TRUE(state_.comparing()) << state_.message.text;
  EXPECT_EQ(state_.baseline->info.id, run_);
  // The suggestions belong to the old run.
  apply(state_, ApplySuggestion{1});
  EXPECT_TRUE(state_.message.error);
}

TEST_F(SuggestModel, AFailedSearchReportsAndFreesTheJob) {
  state_.services.suggest = [](const SuggestRequest&, JobProgress&) -> Result<SuggestOutcome> {
    return runtime_error("no device model");
  };
  apply(state_, OpenDatabase{db_});
  apply(state_, OpenRun{run_});
  wait_for_job(state_);
  apply(state_, Suggest{});
  wait_for_job(state_);
  EXPECT_FALSE(state_.busy());
  EXPECT_TRUE(state_.message.error);
  EXPECT_NE(state_.message.text.find("no device model"), std::string::npos);
  EXPECT_FALSE(state_.suggestions.has_value());
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The real search and rerun: the applied run's makespan is the predicted one.
TEST_F(SuggestModel, RealSearchAppliedOnTheSimulatorGivesThePredictedMakespan) {
  const std::string program = read(std::string(SL_SOURCE_DIR) + "/samples/two_gemms_two_streams.hlo");
  ASSERT_FALSE(program.empty());
  RerunRequest first;
  first.db_path = db_;
  first.source_run = run_;
  first.backend = "sim";
  first.device_model = "h200";
  first.program_text = program;
  first.program_name = "two_gemms_two_streams";
  JobProgress progress;
  Result<int64_t> base = default_services().rerun(first, progress);
  ASSERT_TRUE(base) << base.status().message();

  apply(state_, OpenDatabase{db_});
  apply(state_, OpenRun{*base});
  wait_for_job(state_);
  apply(state_, Suggest{});
  wait_for_job(state_);
  ASSERT_TRUE(state_.suggestions.has_value()) << state_.message.text;
  ASSERT_FALSE(state_.suggestions->candidates.empty());
  EXPECT_EQ(state_.suggestions->original_makespan_ns, state_.current->info.makespan_ns);
  const Suggestion best = state_.suggestions->candidates.front();
  EXPECT_LT(best.makespan_ns, state_.suggestions->original_makespan_ns);
  apply(state_, ApplySuggestion{1});
  wait_for_job(state_);
  ASSERT_FALSE(state_.message.error) << state_.message.text;
  ASSERT_TRUE(state_.comparing());
  EXPECT_EQ(state_.baseline->info.id, *base);
  EXPECT_EQ(state_.current->info.makespan_ns, best.makespan_ns);
  EXPECT_EQ(state_.current->info.backend, "sim");
}

}  // namespace
}  // namespace sl::gui
