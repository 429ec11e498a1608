// Model actions of issue 22: statistics rows that reveal an event and open
// Details, measured ranges, search by duration, the rerun that opens
// compared with its source, and their script commands.

#include <gtest/gtest.h>

#include "app/gui/model/app_state.h"
#include "app/gui/model/script.h"
#include "tests/gui/gui_test_util.h"

namespace sl::gui {
namespace {

using testing::known_streams;
using testing::known_trace;
using testing::save_trace;
using testing::ScratchDir;

class MeasureModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("runs.db");
    run_ = save_trace(db_, known_trace(), testing::kTwoDotsProgram, known_streams());
    state_.services = default_services();
    apply(state_, OpenDatabase{db_});
    apply(state_, OpenRun{run_});
    wait_for_job(state_);
    ASSERT_TRUE(state_.has_run()) << state_.message.text;
  }
  const trace::CompactTrace& trace() const { return state_.current->trace; }
  std::string selected_name() const {
    return trace().name_of(trace().events[static_cast<size_t>(state_.selected)]);
  }
  ScratchDir dir_;
  std::string db_;
  int64_t run_ = 0;
  AppState state_;
};

TEST_F(MeasureModelTest, RevealSelectsBringsIntoViewAndAsksForDetails) {
  apply(state_, ZoomTo{0, 100000});  // the first 100 µs: add_kernel (1.0..1.1 ms) is out of view
  const int64_t generation = state_.tab_request.generation;
  int64_t add = -1;
  for (size_t i = 0; i < trace().events.size(); ++i) {
    if (trace().name_of(trace().events[i]) == "add_kernel") add = static_cast<int64_t>(i);
  }
  ASSERT_GE(add, 0);
  apply(state_, Reveal{add});
  EXPECT_EQ(state_.selected, add);
  EXPECT_LE(state_.viewport.start_ns, 1000000);
  EXPECT_GE(state_.viewport.end_ns, 1100000);
  EXPECT_EQ(state_.viewport.span_ns(), 100000);  // the zoom is kept
  EXPECT_EQ(state_.tab_request.tab, "details");
  EXPECT_EQ(state_.tab_request.generation, generation + 1);
  // The longest event by rank (the statistics' longest list): the 1 ms GEMM.
  apply(state_, Reveal{-1, 1});
  EXPECT_EQ(selected_name(), "gemm_bf16_tile");
  apply(state_, Reveal{-1, 2});
  EXPECT_EQ(selected_name(), "ncclAllGather");  // 800 µs
  apply(state_, Reveal{-1, 99});
  EXPECT_TRUE(state_.message.error);
  const int64_t before_compare_row = state_.tab_request.generation;
  apply(state_, Reveal{add, 0, false});  // a compare row: into view, no tab change
  EXPECT_EQ(state_.selected, add);
  EXPECT_EQ(state_.tab_request.generation, before_compare_row);
  apply(state_, ShowTab{"statistics"});
  EXPECT_EQ(state_.tab_request.tab, "statistics");
  EXPECT_EQ(state_.tab_request.generation, generation + 4);  // one per successful Reveal and ShowTab
}

TEST_F(MeasureModelTest, MeasuredRangeKeepsItsStatisticsUntilCleared) {
  apply(state_, SetRange{150000, 950000});  // [150, 950) µs: only neg_kernel starts in it (the all-gather at 100 µs)
  ASSERT_TRUE(state_.range.has_value());
  EXPECT_EQ(state_.range->t1 - state_.range->t0, 800000);  // shown at once; its statistics come from a worker
  EXPECT_TRUE(state_.stats_pending());
  wait_for_job(state_);
  EXPECT_FALSE(state_.range_pending());
  EXPECT_EQ(state_.range->events, 1);
  ASSERT_EQ(state_.range->kernels.size(), 1u);
  EXPECT_EQ(state_.range->kernels[0].name, "neg_kernel");
  apply(state_, ZoomAt{0.5, 0});  // navigating keeps it
  apply(state_, Select{0});
  EXPECT_TRUE(state_.range.has_value());
  apply(state_, ClearRange{});
  EXPECT_FALSE(state_.range.has_value());
  // Opening another run drops a range of the old one.
  apply(state_, SetRange{0, 10});
  apply(state_, OpenRun{run_});
  wait_for_job(state_);
  EXPECT_FALSE(state_.range.has_value());
}

// A range replaced before its worker finished never installs the old result.
TEST_F(MeasureModelTest, ANewerRangeWinsOverAnEarlierPendingOne) {
  apply(state_, SetRange{0, 2000000});
  apply(state_, SetRange{150000, 950000});
  wait_for_job(state_);
  ASSERT_TRUE(state_.range.has_value());
  EXPECT_EQ(state_.range->t0, 150000);
  EXPECT_EQ(state_.range->events, 1);
  EXPECT_TRUE(state_.stale_ranges.empty());
  apply(state_, SetRange{0, 2000000});
  apply(state_, ClearRange{});  // cleared while computing: stays cleared
  wait_for_job(state_);
  EXPECT_FALSE(state_.range.has_value());
}

TEST_F(MeasureModelTest, SearchJumpsToTheLongestHit) {
  apply(state_, Search{"kernel"});  // add_kernel 100 µs (later), neg_kernel 200 µs (earlier)
  ASSERT_EQ(state_.search_hits.size(), 2u);
  apply(state_, Search{"_"});  // gemm_bf16_tile, add_kernel, neg_kernel
  ASSERT_EQ(state_.search_hits.size(), 3u);
  apply(state_, SearchNext{1});
  EXPECT_EQ(selected_name(), "gemm_bf16_tile");  // time order: starts at 0
  apply(state_, Search{"kernel"});
  apply(state_, SearchLongest{});
  EXPECT_EQ(selected_name(), "neg_kernel");
  EXPECT_TRUE(state_.search_by_duration);
  apply(state_, SearchNext{1});  // then by duration
  EXPECT_EQ(selected_name(), "add_kernel");
  apply(state_, Search{"kernel"});  // a new search is in time order again
  EXPECT_FALSE(state_.search_by_duration);
  apply(state_, Search{"nothing matches this"});
  apply(state_, SearchLongest{});
  EXPECT_TRUE(state_.message.error);
}

// A rerun that copies its source with one instruction on another stream.
Result<int64_t> moving_rerun(const RerunRequest& r, JobProgress& progress) {
  progress.phase = JobProgress::kRunning;
  auto store = trace::TraceStore::open(r.db_path, trace::TraceStore::Mode::kOpenExisting);
  if (!store) return store.status();
  SL_ASSIGN_OR_RETURN(trace::Trace t, (*store)->load_trace(r.source_run));
  for (auto& e : t.events) {
    auto it = r.overrides.find(t.instruction_of(e));
    if (it != r.overrides.end()) e.stream = it->second;
  }
  trace::RunInfo info;
  info.name = "rerun";
  info.backend = r.backend;
  return (*store)->save_run(info, r.program_text, known_streams(), t);
}

TEST_F(MeasureModelTest, RerunOpensComparedWithItsSource) {
  state_.services.rerun = moving_rerun;
  apply(state_, SetStream{"n0", 3});
  apply(state_, Rerun{"sim"});
  ASSERT_FALSE(state_.message.error) << state_.message.text;
  wait_for_job(state_);
  ASSERT_TRUE(state_.has_run());
  EXPECT_NE(state_.current->info.id, run_);
  ASSERT_TRUE(state_.comparing()) << state_.message.text;
  EXPECT_EQ(state_.baseline->info.id, run_);
  EXPECT_GE(state_.comparison->changed_count, 1);  // n0 moved to stream 3
  EXPECT_EQ(programs_differ(*state_.comparison), "");
}

TEST(MeasureScript, NewCommandsParse) {
  auto s = parse_script("measure 1.5 20\nclear-measure\nsearch-longest\nreveal-longest 3\ntab statistics\n", "m.txt");
  ASSERT_TRUE(s) << s.status().message();
  ASSERT_EQ(s->size(), 5u);
  auto action = [&](size_t i) { return std::get<Action>((*s)[i].step); };
  EXPECT_EQ(std::get<SetRange>(action(0)).t0_ns, 1500);
  EXPECT_EQ(std::get<SetRange>(action(0)).t1_ns, 20000);
  EXPECT_TRUE(std::holds_alternative<ClearRange>(action(1)));
  EXPECT_TRUE(std::holds_alternative<SearchLongest>(action(2)));
  EXPECT_EQ(std::get<Reveal>(action(3)).rank, 3);
  EXPECT_EQ(std::get<ShowTab>(action(4)).tab, "statistics");
  EXPECT_EQ(describe(action(0)), "measure-ns 1500 20000");
  for (const char* bad : {"measure 1\n", "reveal-longest 0\n", "tab nowhere\n", "search-longest now\n"}) {
    auto r = parse_script(bad, "m.txt");
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_NE(r.status().message().find("m.txt:1: error:"), std::string::npos) << r.status().message();
    }
  }
}

}  // namespace
}  // namespace sl::gui
