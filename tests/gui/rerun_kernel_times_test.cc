// A rerun of a real XLA program in streamlens-gui is a what-if on the
// program's own kernel times: from a capture linked to its module (the
// committed tests/corpus/captures/mlp, H200), the simulator reruns the
// module costed by the capture and launched as its thunk dump says, exactly
// as `streamlens run MODULE --backend sim --kernel-times RUN` does, and a
// rerun of that rerun is costed alike.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "app/common/kernel_times.h"
#include "app/gui/model/app_state.h"
#include "app/gui/model/services.h"
#include "app/gui/model/suggest.h"
#include "tests/gui/gui_test_util.h"

namespace sl::gui {
namespace {

namespace fs = std::filesystem;
const fs::path kCapture = fs::path(SL_SOURCE_DIR) / "tests/corpus/captures/mlp";

class GuiRerunKernelTimes : public ::testing::Test {
 protected:
  void SetUp() override { db_ = dir_.file("runs.db"); }
  // `streamlens ARGS --db DB`, its output thrown away; its exit status.
  int streamlens(const std::string& args) {
    const std::string command =
        std::string(SL_STREAMLENS) + " " + args + " --db " + db_ + " >" + dir_.file("out.txt") + " 2>&1";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // The request the Rerun button makes for `run` on the simulator.
  RerunRequest request_for(int64_t run) {
    auto store = trace::TraceStore::open(db_, trace::TraceStore::Mode::kReadOnly);
    EXPECT_TRUE(store);
    RerunRequest r;
    r.db_path = db_;
    r.source_run = run;
    r.backend = "sim";
    auto info = (*store)->run_info(run);
    auto text = (*store)->program_text(run);
    EXPECT_TRUE(info && text);
    r.program_text = *text;
    r.program_name = info->program_name;
    app::KernelTimesSource times = app::kernel_times_source(*info);
    r.device_model = times.device;
    r.kernel_times_run = times.run;
    r.module_path = times.module_path;
    return r;
  }
  trace::RunInfo info_of(int64_t run) {
    auto store = trace::TraceStore::open(db_, trace::TraceStore::Mode::kReadOnly);
    EXPECT_TRUE(store);
    auto info = (*store)->run_info(run);
    EXPECT_TRUE(info);
    return info ? *info : trace::RunInfo{};
  }

  testing::ScratchDir dir_;
  std::string db_;
};

TEST_F(GuiRerunKernelTimes, ALinkedCaptureRerunsOnItsOwnKernelTimesAsTheCliDoes) {
  if (streamlens("import " + (kCapture / "capture.jsonl").string() + " --xla-dump " + kCapture.string()) != 0) {
    GTEST_SKIP() << "this streamlens reads no capture files (built without CUDA's headers)";
  }
  const RerunRequest replay = request_for(1);
  EXPECT_EQ(replay.kernel_times_run, 1);
  EXPECT_TRUE(replay.module_path.ends_with("module_0000.jit_step.sm_9.0a_gpu_after_optimizations.txt"))
      << replay.module_path;
  JobProgress progress;
  Result<int64_t> rerun = default_services().rerun(replay, progress);
  ASSERT_TRUE(rerun) << rerun.status().message();
  const trace::RunInfo gui = info_of(*rerun);
  EXPECT_EQ(gui.device_model, "h200 + kernel times of run 1 (31 steps)");

  // The CLI's trace-driven run of the same module: the same step.
  ASSERT_EQ(streamlens("run " + replay.module_path + " --backend sim --kernel-times 1"), 0);
  const trace::RunInfo cli = info_of(*rerun + 1);
  EXPECT_EQ(gui.makespan_ns, cli.makespan_ns);
  EXPECT_GT(gui.makespan_ns, 0);

  // A rerun of the rerun, with an instruction moved, is costed by the capture
  // too, as the CLI's run with that --stream.
  RerunRequest moved = request_for(*rerun);
  EXPECT_EQ(moved.kernel_times_run, 1);
  EXPECT_EQ(moved.module_path, replay.module_path);
  moved.overrides["wrapped_subtract"] = 1;
  Result<int64_t> what_if = default_services().rerun(moved, progress);
  ASSERT_TRUE(what_if) << what_if.status().message();
  ASSERT_EQ(streamlens("run " + replay.module_path + " --backend sim --kernel-times 1 --stream wrapped_subtract=1"), 0);
  EXPECT_EQ(info_of(*what_if).device_model, "h200 + kernel times of run 1 (31 steps)");
  EXPECT_EQ(info_of(*what_if).makespan_ns, info_of(*what_if + 1).makespan_ns);
}

// Suggest on a linked capture searches on its kernel times, as `streamlens
// suggest --kernel-times` does: the same program's makespan (121.5 us, not
// the device model's 639 us).
TEST_F(GuiRerunKernelTimes, SuggestOnALinkedCaptureSearchesOnItsKernelTimes) {
  if (streamlens("import " + (kCapture / "capture.jsonl").string() + " --xla-dump " + kCapture.string()) != 0) {
    GTEST_SKIP() << "this streamlens reads no capture files (built without CUDA's headers)";
  }
  const RerunRequest rerun = request_for(1);
  SuggestRequest request;
  request.source_run = 1;
  request.program_text = rerun.program_text;
  request.program_name = rerun.program_name;
  request.budget = 50;
  JobProgress progress;
  Result<SuggestOutcome> modelled = default_services().suggest(request, progress);
  ASSERT_TRUE(modelled) << modelled.status().message();
  request.db_path = db_;
  request.kernel_times_run = 1;
  Result<SuggestOutcome> measured = default_services().suggest(request, progress);
  ASSERT_TRUE(measured) << measured.status().message();
  ASSERT_EQ(streamlens("suggest " + rerun.module_path + " --kernel-times 1 --budget 50 --json"), 0);
  const std::string cli = test_support::read_bytes(dir_.file("out.txt"));
  EXPECT_NE(cli.find("\"original_makespan_ns\": " + std::to_string(measured->original_makespan_ns)),
            std::string::npos)
      << measured->original_makespan_ns << " " << cli.substr(0, 300);
  EXPECT_NE(measured->original_makespan_ns, modelled->original_makespan_ns);
}

// Moving a graph node of a linked capture changes nothing in its rerun (XLA
// orders a command buffer's nodes by its edges): the program panel marks the
// node and the edit says so at once, as `run --stream` notes it. The same
// program captured without command buffers has no graph nodes.
TEST_F(GuiRerunKernelTimes, MovingAGraphNodeSaysItChangesNothing) {
  const fs::path nocb = kCapture.parent_path() / "mlp_nocb";
  if (streamlens("import " + (kCapture / "capture.jsonl").string() + " --xla-dump " + kCapture.string()) != 0) {
    GTEST_SKIP() << "this streamlens reads no capture files (built without CUDA's headers)";
  }
  ASSERT_EQ(streamlens("import " + (nocb / "capture.jsonl").string() + " --xla-dump " + nocb.string()), 0);
  AppState state;
  state.services = default_services();
  apply(state, OpenDatabase{db_});
  apply(state, OpenRun{1});
  wait_for_job(state);
  ASSERT_TRUE(state.has_run()) << state.message.text;
  EXPECT_TRUE(state.current->graph_nodes.count("wrapped_subtract")) << state.current->graph_nodes.size();
  apply(state, SetStream{"wrapped_subtract", 1});
  EXPECT_FALSE(state.message.error) << state.message.text;
  EXPECT_NE(state.message.text.find("command buffer (CUDA graph)"), std::string::npos) << state.message.text;
  EXPECT_EQ(state.edits.at("wrapped_subtract"), 1);  // the edit is kept all the same

  apply(state, OpenRun{2});
  wait_for_job(state);
  ASSERT_TRUE(state.has_run()) << state.message.text;
  ASSERT_EQ(state.current->info.id, 2);
  EXPECT_TRUE(state.current->graph_nodes.empty());
  state.edits.clear();
  apply(state, SetStream{"wrapped_subtract", 1});
  EXPECT_EQ(state.message.text.find("command buffer"), std::string::npos) << state.message.text;
}

// Any other run reruns on the device model alone.
TEST_F(GuiRerunKernelTimes, ARunWithoutACaptureHasNoKernelTimes) {
  trace::RunInfo plain;
  plain.id = 4;
  plain.backend = "sim";
  plain.config_json = R"({"program":"x.hlo"})";
  EXPECT_EQ(app::kernel_times_source(plain).run, 0);
  plain.backend = "capture";  // captured, never linked
  plain.config_json = R"({"command":["python3"]})";
  EXPECT_EQ(app::kernel_times_source(plain).run, 0);
}

}  // namespace
}  // namespace sl::gui
