// measured_times on hand-made linked traces: per-instruction GPU time per
// step and the median step, with the same median as the rest of streamlens.

#include "sim/trace_driven.h"

#include <gtest/gtest.h>

#include "core/trace/iterations.h"
#include "tests/common/test_support.h"

namespace sl::sim {
namespace {

// h200.json's min_kernel_us.
constexpr int64_t kShortestKernelNs = 928;

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
  EXPECT_EQ(m->busy_ns_per_step.at("cudnn-conv.3"), 15000) << "its kernels alone";
  EXPECT_EQ(m->issue_span_ns_per_step.at("cudnn-conv.3"), 8000) << "its host code issued the kernel 8 us later";
  EXPECT_EQ(m->issue_span_ns_per_step.count("loop_add_fusion"), 0u) << "XLA's kernel again is a loop's next trip";
  EXPECT_EQ(m->ns_per_step.at("loop_add_fusion"), 2000) << "two trips: the host's 9 us between them are no kernel's";
  EXPECT_EQ(m->gap_ns_per_step.at("loop_add_fusion"), 10000 + 9000);
  EXPECT_EQ(m->ns_per_step.at("copy-start"), 2000);
}

// A program of `gemms` GEMM thunks the model costs 8 us and the run measured
// at 1 us (Triton GEMM fusions, or cuBLAS calls with `calls`), and five
// elementwise thunks modelled at 1 us and measured at 1.5 us; then one GEMM
// (a cuBLAS call with `new_call`, else a fusion) and one elementwise thunk
// the run never ran.
struct BiasCase {
  std::vector<std::string> names;
  sched::DeviceProgram program;
  MeasuredTimes measured;
  trace::Trace modelled;
};

BiasCase bias_case(int gemms, bool calls = false, bool new_call = true) {
  BiasCase c;
  const std::string gemm_name = calls ? "custom-call." : "gemm_fusion_dot.";
  for (int i = 0; i < gemms; ++i) c.names.push_back(gemm_name + std::to_string(i));
  for (int i = 0; i < 5; ++i) c.names.push_back("loop_add_fusion." + std::to_string(i));
  c.names.push_back(new_call ? "custom-call.99" : "gemm_fusion_dot.99");
  c.names.push_back("loop_multiply_fusion");
  for (size_t i = 0; i < c.names.size(); ++i) {
    const bool gemm = c.names[i].starts_with("gemm") || c.names[i].starts_with("custom");
    sched::Thunk t;
    t.kind = c.names[i].starts_with("custom") ? sched::ThunkKind::kGemm : sched::ThunkKind::kKernel;
    t.attributed_name = c.names[i];
    c.program.thunks.push_back(t);
    const int64_t model_ns = gemm ? 8000 : 1000;
    const uint32_t e = test_support::add_event(c.modelled, 0, 0, gemm ? trace::EventKind::kGemm
                                                                       : trace::EventKind::kElementwise,
                                               c.names[i], c.names[i], 0, model_ns);
    c.modelled.events[e].correlation = static_cast<int64_t>(i);
    if (i + 2 < c.names.size()) c.measured.ns_per_step[c.names[i]] = gemm ? 1000 : 1500;
  }
  return c;
}

// The model is 8x slow on this run's GEMMs and 1.5x fast on its other
// kernels: a GEMM fusion it never saw takes the GEMMs' bias, not the median
// of all.
TEST(TraceDriven, AGemmFusionTheRunNeverRanTakesTheGemmsBias) {
  BiasCase c = bias_case(4, false, false);
  const ThunkTimes t = thunk_times({c.program}, c.measured, c.modelled, {0, kShortestKernelNs, 0});
  EXPECT_EQ(t.matched_thunks, 9);
  EXPECT_EQ(t.modelled_thunks, 2);
  EXPECT_EQ(t.gemm_bias_samples, 4);
  EXPECT_DOUBLE_EQ(t.gemm_model_bias, 0.125);
  EXPECT_DOUBLE_EQ(t.model_bias, 1.5);
  EXPECT_EQ(t.ns[0][9], 1000) << "8 us x 0.125, not x 1.5";
  EXPECT_EQ(t.ns[0][10], 1500);
}

// With fewer matched GEMMs than kMinGemmBiasSamples, one median for all.
TEST(TraceDriven, TooFewMatchedGemmsShareTheMedianOfAll) {
  BiasCase c = bias_case(2, false, false);
  const ThunkTimes t = thunk_times({c.program}, c.measured, c.modelled, {0, kShortestKernelNs, 0});
  EXPECT_EQ(t.gemm_bias_samples, 2);
  EXPECT_DOUBLE_EQ(t.gemm_model_bias, t.model_bias);
  EXPECT_DOUBLE_EQ(t.model_bias, 1.5);  // 2 of 7 ratios are 0.125
  EXPECT_EQ(t.ns[0][7], 12000);
}

// The same product runs at another speed as a Triton fusion and as a cuBLAS
// call: a call the run never ran, when it matched only fusions, is the
// model's (its fixed cost and its product), not the fusions' 0.125.
TEST(TraceDriven, ACublasCallDoesNotTakeTheTritonGemmsBias) {
  BiasCase c = bias_case(4);
  const ThunkTimes t = thunk_times({c.program}, c.measured, c.modelled, {2000, kShortestKernelNs, 0});
  EXPECT_EQ(t.call_bias_samples, 0);
  EXPECT_DOUBLE_EQ(t.call_model_bias, 1.0);
  EXPECT_DOUBLE_EQ(t.gemm_model_bias, 0.125);
  EXPECT_EQ(t.ns[0][9], 8000);
}

// Matched cuBLAS calls modelled at 8 us (2 us of it the call's fixed cost)
// measured 3.5 us: their bias on the product is 1.5 / 6; a new call pays the
// fixed cost and its product at that bias.
TEST(TraceDriven, ACublasCallTheRunNeverRanPaysTheFixedCostAndTheCallsBias) {
  BiasCase c = bias_case(4, true, true);
  for (int i = 0; i < 4; ++i) c.measured.ns_per_step["custom-call." + std::to_string(i)] = 3500;
  const ThunkTimes t = thunk_times({c.program}, c.measured, c.modelled, {2000, kShortestKernelNs, 0});
  EXPECT_EQ(t.call_bias_samples, 4);
  EXPECT_DOUBLE_EQ(t.call_model_bias, 0.25) << "(3.5 - 2) / (8 - 2)";
  EXPECT_EQ(t.ns[0][9], 2000 + 1500);
  EXPECT_EQ(t.ns[0][10], 1500);
}

// A dynamic-slice fusion (a kernel thunk XLA runs as a cuBLAS call) the run
// never ran is a call: the model's fixed cost and product at the calls'
// bias (none matched here: 1), not the Triton fusions' 0.125.
TEST(TraceDriven, ADynamicSliceFusionTheRunNeverRanIsACublasCall) {
  BiasCase c = bias_case(4, false, true);
  sched::Thunk& fusion = c.program.thunks[9];
  fusion.kind = sched::ThunkKind::kKernel;
  fusion.fusion_calls_library = true;
  const ThunkTimes t = thunk_times({c.program}, c.measured, c.modelled, {2000, kShortestKernelNs, 0});
  EXPECT_DOUBLE_EQ(t.gemm_model_bias, 0.125);
  EXPECT_DOUBLE_EQ(t.call_model_bias, 1.0);
  EXPECT_EQ(t.ns[0][9], 8000) << "as the cuBLAS call it is";
  fusion.fusion_calls_library = false;
  EXPECT_EQ(thunk_times({c.program}, c.measured, c.modelled, {2000, kShortestKernelNs, 0}).ns[0][9], 1000)
      << "a GEMM kernel: 8 us at the Triton fusions' bias";
}

// XLA's small kernels take a fixed part and their bytes' time (the model:
// the longer of its floor and that time). The five matched elementwise
// kernels move 200 bytes (200 ns at 1 byte/ns) and ran 1.5 us: a fixed
// part of 1.3 us. The elementwise kernel the run never ran moves 700 bytes:
// 1.3 + 0.7 us, where the model at the kernels' bias said 1.5.
TEST(TraceDriven, ASmallKernelTheRunNeverRanTakesTheRunsFixedPartAndItsBytes) {
  BiasCase c = bias_case(4);
  for (trace::Event& e : c.modelled.events) {
    if (e.kind == trace::EventKind::kElementwise) e.bytes = 200;
  }
  c.modelled.events.back().bytes = 700;
  const ThunkTimes t = thunk_times({c.program}, c.measured, c.modelled, {2000, kShortestKernelNs, 1.0});
  EXPECT_EQ(t.kernel_fixed_samples, 5);
  EXPECT_EQ(t.kernel_fixed_ns, 1300);
  EXPECT_EQ(t.ns[0][10], 2000);
  // A long kernel keeps the model's time at the bias: 10 us x 1.5, not 1.3 + 10.
  c.modelled.events.back().bytes = 10000;
  c.modelled.events.back().end_ns = 10000;
  EXPECT_EQ(thunk_times({c.program}, c.measured, c.modelled, {2000, kShortestKernelNs, 1.0}).ns[0][10], 15000);
  // Too few matched: the device's shortest kernel is the fixed part.
  for (int i = 1; i < 5; ++i) c.measured.ns_per_step.erase("loop_add_fusion." + std::to_string(i));
  c.modelled.events.back().bytes = 700;
  c.modelled.events.back().end_ns = 1000;
  const ThunkTimes few = thunk_times({c.program}, c.measured, c.modelled, {2000, kShortestKernelNs, 1.0});
  EXPECT_EQ(few.kernel_fixed_ns, kShortestKernelNs);
  EXPECT_EQ(few.ns[0][10], kShortestKernelNs + 700);
}

// A cuDNN call of three kernels: the second after 4 us of idle GPU (issued
// then), the third right behind it, issued any time before: the host's code
// ran 4 us + the first kernel's, not the 30 us of the second kernel too.
TEST(TraceDriven, ARecordRightBehindTheLastTellsNothingOfTheHost) {
  trace::Trace t;
  auto add = [&](const char* name, int64_t start, int64_t end) {
    t.events[test_support::add_event(t, 0, 0, trace::EventKind::kGemm, name, "cudnn-conv-bw-filter.2", start,
                                     end)].iteration = 0;
  };
  add("init_device_workspace_kernel__5x_cudnn", 0, 3000);
  add("wgrad_execute_segment_k_on_kernel__5x_cudnn", 7000, 37000);
  add("wgrad_execute_split_k_kernel__5x_cudnn", 36900, 42000);
  Result<MeasuredTimes> m = measured_times(t);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_EQ(m->issue_span_ns_per_step.at("cudnn-conv-bw-filter.2"), 7000);
}

// XLA's autotuner timed the GEMM the run never ran at 20 us alone; its log
// runs 2.5 us over a step's kernels: the GEMM costs 0.95 x 17.5 us, not the
// model's 8 us x a bias. An instruction the run did run keeps its own time.
TEST(TraceDriven, AGemmTheRunNeverRanCostsItsAutotunedTimeLessTheLogsOverhead) {
  BiasCase c = bias_case(4, false, false);
  c.measured.autotuned["gemm_fusion_dot.99"] = {20000, "TRITON"};
  c.measured.autotuned["gemm_fusion_dot.0"] = {50000, "TRITON"};
  c.measured.autotune_overhead_by_backend["TRITON"] = 2500;
  const ThunkTimes t = thunk_times({c.program}, c.measured, c.modelled, {0, kShortestKernelNs, 0});
  EXPECT_EQ(t.modelled_thunks, 2);
  EXPECT_EQ(t.autotuned_thunks, 1);
  EXPECT_EQ(t.ns[0][9], 16625) << "0.95 x (20 - 2.5) us";
  EXPECT_EQ(t.ns[0][0], 1000) << "measured, whatever the log says";
  EXPECT_EQ(t.ns[0][10], 1500) << "no log entry: the model times its bias";
}

// A short kernel is what the overhead leaves of its autotuned time: set
// 23's dlt timed a slice fusion at 4.4 us that its steps ran in 1.2. Less
// than the device's shortest kernel is left only where the log says less.
TEST(TraceDriven, AShortAutotunedKernelIsWhatTheOverheadLeaves) {
  EXPECT_EQ(autotuned_kernel_ns(4400, 3000, kShortestKernelNs), 1330) << "0.95 x (4.4 - 3.0) us, not half of 4.4";
  EXPECT_EQ(autotuned_kernel_ns(10000, 0, kShortestKernelNs), 9500);
  EXPECT_EQ(autotuned_kernel_ns(3500, 3000, kShortestKernelNs), kShortestKernelNs) << "never under the shortest kernel";
  EXPECT_EQ(autotuned_kernel_ns(500, 3000, kShortestKernelNs), 475) << "unless the log itself is shorter";
  EXPECT_EQ(autotuned_kernel_ns(1, 5000, kShortestKernelNs), 1);
}

// The overhead from the run's own log: per launch, autotuned minus measured
// over the scale; the median of the instructions the run ran.
TEST(TraceDriven, TheLogsOverheadIsTheMedianOverTheRunsOwnInstructions) {
  MeasuredTimes m;
  m.busy_ns_per_step = {{"a", 19000}, {"b", 9500}, {"c", 950}};
  m.launches_per_step = {{"a", 2}, {"b", 1}, {"c", 1}};
  estimate_autotune_overhead(m, {{"a", {12500, "TRITON"}},
                                 {"b", {13000, "TRITON"}},
                                 {"c", {1100, "TRITON"}},
                                 {"never_ran", {90000, "TRITON"}}});
  EXPECT_EQ(m.autotune_overhead_samples.at("TRITON"), 3);
  EXPECT_EQ(m.autotune_overhead_ns("TRITON"), 2500) << "a: 12.5 - 9.5 / 0.95; b: 3; c: 0.1";
  MeasuredTimes none;
  estimate_autotune_overhead(none, {{"never_ran", {90000, "TRITON"}}});
  EXPECT_EQ(none.autotune_overhead_samples.count("TRITON"), 0u);
  EXPECT_EQ(none.autotune_overhead_ns("TRITON"), default_autotune_overhead_ns("TRITON"));
}

// A cuBLAS call that waited on the host between its GEMM and its split-K
// reduction (the call after a loop, its graph launched late) ran its
// kernels no longer: the wait is not the log's overhead (hold-out set 14's
// chb: an overhead of -4.5 us doubled the what-if's GEMMs).
TEST(TraceDriven, TheLogsOverheadLeavesOutTheWaitInsideACall) {
  trace::Trace t;
  auto add = [&](const char* name, const char* instruction, int64_t start, int64_t end) {
    t.events[test_support::add_event(t, 0, 0, trace::EventKind::kGemm, name, instruction, start, end)].iteration = 0;
  };
  add("cutlass::Kernel2", "custom-call.3", 0, 5000);
  add("cublasLt::splitKreduce_kernel", "custom-call.3", 14000, 16000);
  add("cutlass::Kernel2", "custom-call.4", 20000, 27000);
  add("cutlass::Kernel2", "custom-call.5", 30000, 37000);
  Result<MeasuredTimes> m = measured_times(t);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_EQ(m->ns_per_step.at("custom-call.3"), 16000) << "the stream is the call's until its last kernel ends";
  // Samples 2282, 1632 and 2632 ns: the median is custom-call.3's.
  estimate_autotune_overhead(*m, {{"custom-call.3", {9650, "CUBLASLT"}},
                                  {"custom-call.4", {9000, "CUBLASLT"}},
                                  {"custom-call.5", {10000, "CUBLASLT"}}});
  EXPECT_EQ(m->autotune_overhead_samples.at("CUBLASLT"), 3);
  EXPECT_EQ(m->autotune_overhead_ns("CUBLASLT"), 2282) << "9.65 - 7 / 0.95, not 9.65 - 16 / 0.95";
}

// One or two instructions of the run's own log are one kernel's noise: the
// overhead is the default until there are kMinAutotuneOverheadSamples.
TEST(TraceDriven, TooFewSamplesOfTheLogsOverheadGiveTheDefault) {
  trace::Trace t;
  t.events[test_support::add_event(t, 0, 0, trace::EventKind::kGemm, "cutlass::Kernel2", "custom-call.4", 0, 7000)]
      .iteration = 0;
  t.events[test_support::add_event(t, 0, 0, trace::EventKind::kGemm, "cutlass::Kernel2", "custom-call.5", 8000,
                                   15000)]
      .iteration = 0;
  Result<MeasuredTimes> m = measured_times(t);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  estimate_autotune_overhead(*m, {{"custom-call.4", {9000, "CUBLASLT"}}, {"custom-call.5", {10000, "CUBLASLT"}}});
  EXPECT_EQ(m->autotune_overhead_samples.at("CUBLASLT"), 2);
  EXPECT_EQ(m->autotune_overhead_ns("CUBLASLT"), default_autotune_overhead_ns("CUBLASLT"))
      << "not 2132, the median of 1632 and 2632";
}

// Launches a step: a loop's kernel run twice is two; a cuBLAS call of a
// GEMM and its split-K reduction is one.
TEST(TraceDriven, ACallOfTwoKernelsIsOneLaunchALoopsTwoTripsAreTwo) {
  trace::Trace t;
  auto add = [&](const char* name, const char* instruction, int64_t start, int64_t end) {
    t.events[test_support::add_event(t, 0, 0, trace::EventKind::kOther, name, instruction, start, end)].iteration = 0;
  };
  add("nvjet_sm90_tst_128x64", "custom-call.3", 0, 5000);
  add("splitKreduce_kernel", "custom-call.3", 5000, 6000);
  add("loop_add_fusion", "loop_add_fusion", 7000, 8000);
  add("loop_add_fusion", "loop_add_fusion", 9000, 10000);
  Result<MeasuredTimes> m = measured_times(t);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_EQ(m->launches_per_step.at("custom-call.3"), 1);
  EXPECT_EQ(m->launches_per_step.at("loop_add_fusion"), 2);
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
