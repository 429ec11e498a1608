// measured_times on hand-made linked traces: per-instruction GPU time per
// step and the median step, with the same median as the rest of streamlens.

#include "sim/trace_driven.h"

#include <gtest/gtest.h>

#include "core/trace/iterations.h"
#include "tests/common/test_support.h"

namespace sl::sim {
namespace {

// Four steps of one 'dot' each, taking 400, 100, 300 and 200 ns.
trace::Trace four_steps() {
  trace::Trace t;
  const int64_t durations[] = {400, 100, 300, 200};
  for (int32_t step = 0; step < 4; ++step) {
    const int64_t start = step * 1000;
    uint32_t e = test_support::add_event(t, 0, 0, trace::EventKind::kGemm, "gemm", "dot", start,
                                         start + durations[step]);
    t.events[e].iteration = step;
  }
  return t;
}

// With an even number of steps the lower of the two middle ones, as
// trace::median_iteration picks the step `show` and compare report.
TEST(TraceDriven, EvenStepCountsTakeTheLowerMedianAsMedianIterationDoes) {
  const trace::Trace t = four_steps();
  Result<MeasuredTimes> m = measured_times(t);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_EQ(m->steps, 4);
  ASSERT_EQ(m->ns_per_step.count("dot"), 1u);
  EXPECT_EQ(m->ns_per_step.at("dot"), 200);
  EXPECT_EQ(m->median_step_ns, 200);
  EXPECT_EQ(m->median_step_ns, trace::one_iteration(t, trace::median_iteration(t)).makespan_ns());
}

// One step: a cuDNN call issuing two kernels 5 us apart, then a loop whose
// body is one XLA kernel, twice, and an async copy twice on its own stream.
TEST(TraceDriven, AStreamIsALibraryCallsUntilItsLastKernelEnds) {
  trace::Trace t;
  using trace::EventKind;
  auto add = [&](int32_t stream, EventKind kind, const char* name, const char* instruction, int64_t start,
                 int64_t end) {
    t.events[test_support::add_event(t, 0, stream, kind, name, instruction, start, end)].iteration = 0;
  };
  add(0, EventKind::kOther, "cudnn::convertTensor_kernel", "cudnn-conv.3", 0, 3000);
  add(0, EventKind::kGemm, "sm90_xmma_fprop_implicit_gemm__5x_cudnn", "cudnn-conv.3", 8000, 20000);
  add(0, EventKind::kOther, "loop_add_fusion", "loop_add_fusion", 30000, 31000);
  add(0, EventKind::kOther, "loop_add_fusion", "loop_add_fusion", 40000, 41000);
  add(1, EventKind::kCopy, "memcpy DtoD", "copy-start", 0, 1000);
  add(1, EventKind::kCopy, "memcpy DtoD", "copy-start", 9000, 10000);
  Result<MeasuredTimes> m = measured_times(t);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_EQ(m->ns_per_step.at("cudnn-conv.3"), 20000) << "its kernels and the 5 us between them";
  EXPECT_EQ(m->ns_per_step.at("loop_add_fusion"), 2000) << "two trips: the host's 9 us between them are no kernel's";
  EXPECT_EQ(m->gap_ns_per_step.at("loop_add_fusion"), 10000 + 9000);
  EXPECT_EQ(m->ns_per_step.at("copy-start"), 2000);
}

TEST(TraceDriven, ARunWithoutStepsIsInvalidInput) {
  trace::Trace t = four_steps();
  for (trace::Event& e : t.events) e.iteration = -1;  // outside every step
  Result<MeasuredTimes> m = measured_times(t);
  ASSERT_FALSE(m.is_ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kInvalidInput);
}

}  // namespace
}  // namespace sl::sim
