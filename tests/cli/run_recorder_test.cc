// record_run keeps the database honest when saving fails part-way: a run
// whose dependencies cannot be stored ends `failed`, not `running`.

#include <gtest/gtest.h>

#include "app/common/run_recorder.h"
#include "tests/common/test_support.h"

namespace sl::app {
namespace {

// Returns a trace whose one dependency names an event that does not exist.
class DanglingDependencyBackend final : public exec::Backend {
 public:
  std::string name() const override { return "fake"; }
  Result<exec::RunOutput> run(const sched::LoweredProgram&, const exec::RunOptions&) override {
    exec::RunOutput out;
    test_support::add_event(out.trace, 0, 0, trace::EventKind::kGemm, "g", "g", 0, 10);
    out.trace.dependencies.push_back({0, 5});
    return out;
  }
};

TEST(RunRecorder, AFailedDependencyWriteMarksTheRunFailed) {
  test_support::ScratchDir dir;
  auto store = trace::TraceStore::open(dir.file("r.db"));
  ASSERT_TRUE(store.is_ok());
  DanglingDependencyBackend backend;
  int64_t begun = 0;
  auto recorded = record_run(**store, trace::RunInfo{}, "", {}, backend, sched::LoweredProgram{}, exec::RunOptions{},
                             nullptr, [&](int64_t id) { begun = id; });
  EXPECT_FALSE(recorded.is_ok());
  ASSERT_GT(begun, 0);
  auto info = (*store)->run_info(begun);
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->status, trace::RunStatus::kFailed);
}

}  // namespace
}  // namespace sl::app
