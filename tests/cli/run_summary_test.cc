// The summary `streamlens run` prints (app/cli/run_summary.h): with several
// iterations (cuda --iterations) it reports the median one, not the first.

#include "app/cli/run_summary.h"

#include <gtest/gtest.h>

#include "core/trace/report.h"
#include "tests/common/test_support.h"

namespace sl::cli {
namespace {

TEST(RunSummary, ReportsTheMedianIterationNotTheFirst) {
  trace::Trace t;
  // Spans 900, 100 and 300 ns: the first is the slowest (a cold start), the median is the third.
  const int64_t spans[][2] = {{0, 900}, {1000, 1100}, {1200, 1500}};
  for (int32_t i = 0; i < 3; ++i) {
    uint32_t e =
        test_support::add_event(t, 0, 0, trace::EventKind::kGemm, "gemm", "dot", spans[i][0], spans[i][1]);
    t.events[e].iteration = i;
  }
  trace::RunInfo info;
  info.id = 7;
  info.name = "r";
  info.backend = "cuda";
  info.device_model = "h200";
  const std::string text = run_summary_text(info, t);
  EXPECT_NE(text.find("3 iterations; the median one took " + trace::format_us(300) + " us"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("makespan " + trace::format_us(1500) + " us"), std::string::npos) << text;
}

TEST(RunSummary, OneIterationPrintsNoIterationLine) {
  trace::Trace t;
  test_support::add_event(t, 0, 0, trace::EventKind::kGemm, "gemm", "dot", 0, 500);
  const std::string text = run_summary_text(trace::RunInfo{}, t);
  EXPECT_EQ(text.find("iterations;"), std::string::npos) << text;
}

}  // namespace
}  // namespace sl::cli
