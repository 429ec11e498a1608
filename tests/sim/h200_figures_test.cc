// The H200 figures the shipped model was fitted to (docs/simulator.md,
// assets/devices/h200.json), pinned tightly to what the model is meant to
// give: each fitted figure within 1% of its fit target, and the others
// within 0.5% of what the model's own formulas and factors give, so that
// dropping or changing a factor (contention_factor, comm_rate_under_compute,
// concurrent_kernel_efficiency) fails. How far those intended values sit from
// the measured reference is documented in bench/RESULTS.md, not tested here.
#include <gtest/gtest.h>

#include "sim/cost_model.h"
#include "sim/device_model.h"
#include "sim/engine.h"
#include "tests/sim/sim_test_util.h"

namespace sl::sim {
namespace {

using hlo::Opcode;
using testing::device;
using testing::only_event;

constexpr double kFitTolerance = 0.01;       // a figure a factor was fitted to
constexpr double kFormulaTolerance = 0.005;  // a figure the model's formulas give
constexpr int kComm = sched::kCommStreamBase;

// bf16 [1024, 24576] x [24576, 24576].
sched::Thunk big_gemm(int stream, const char* name) {
  sched::Thunk t;
  t.kind = sched::ThunkKind::kGemm;
  t.stream = stream;
  t.attributed_name = name;
  t.gemm = {1024, 24576, 24576, 1, hlo::PrimitiveType::kBF16};
  t.flops = 2LL * 1024 * 24576 * 24576;
  t.bytes_accessed = 2LL * (1024LL * 24576 + 24576LL * 24576 + 1024LL * 24576);
  return t;
}

// all-gather of bf16[8192,16384] per GPU on 2 GPUs: 256 MiB in, 512 MiB out.
sched::Thunk all_gather(int64_t rank) {
  return testing::collective(kComm, Opcode::kAllGather, {0, 1}, rank, 256LL << 20, 512LL << 20, 1, "ag");
}

class H200Figures : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<DeviceModel> m = load_device_model("h200");
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    model_ = *m;
  }
  trace::Trace run(std::vector<sched::DeviceProgram> devices) {
    Result<trace::Trace> t = simulate(devices, model_);
    EXPECT_TRUE(t.is_ok()) << t.status().message();
    return t.is_ok() ? std::move(t).value() : trace::Trace{};
  }
  static double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }
  static void expect_near_pct(double actual_ms, double expected_ms, double tolerance) {
    EXPECT_NEAR(actual_ms, expected_ms, expected_ms * tolerance) << "simulated " << actual_ms << " ms";
  }
  // The share of the compute a GEMM keeps beside `collectives` collectives.
  double kept_beside(int collectives) const {
    return 1.0 - collectives * static_cast<double>(model_.nccl_channels) / model_.sm_count *
                     model_.contention_factor;
  }
  double gemm_alone_ms() { return ms(run({device(0, {big_gemm(0, "g")})}).makespan_ns()); }
  double all_gather_alone_ms() {
    return ms(run({device(0, {all_gather(0)}), device(1, {all_gather(1)})}).makespan_ns());
  }
  DeviceModel model_;
};

// gemm_efficiency's largest bucket (0.82) was fitted to the measured 1.57 ms,
// 814 TFLOP/s; wave quantization (768 tiles on 132 SMs) takes it to ~786.
TEST_F(H200Figures, GemmAlone) {
  const double alone = gemm_alone_ms();
  expect_near_pct(alone, 1.57, kFitTolerance);
  double tflops = 2.0 * 1024 * 24576 * 24576 / (alone * 1e-3) / 1e12;
  EXPECT_NEAR(tflops, 786, 786 * kFitTolerance);
}

// One stream: the two back to back, one launch gap apart. Two streams: the
// second waits for the SMs while the first runs at concurrent_kernel_efficiency
// (0.93), then runs alone. (Measured: 3.29 / 3.58 ms in the reference, 3.03-3.10
// / 3.06-3.25 ms in bench/RESULTS.md's torch runs.)
TEST_F(H200Figures, TwoGemmsOneStreamAndTwoStreams) {
  const double alone = gemm_alone_ms();
  trace::Trace one = run({device(0, {big_gemm(0, "g1"), big_gemm(0, "g2")})});
  trace::Trace two = run({device(0, {big_gemm(0, "g1"), big_gemm(1, "g2")})});
  expect_near_pct(ms(one.makespan_ns()), 2 * alone + model_.kernel_launch_us * 1e-3, kFormulaTolerance);
  expect_near_pct(ms(two.makespan_ns()), alone / model_.concurrent_kernel_efficiency + alone,
                  kFormulaTolerance);
  expect_near_pct(ms(two.makespan_ns()), 3.26, kFitTolerance);
  EXPECT_GE(two.makespan_ns(), one.makespan_ns()) << "two saturating GEMMs gain nothing from two streams";
}

// The shipped NCCL figures are for the one-CTA-a-cluster communicators the
// cuda backend makes by default, on which torch ran this all-gather in
// 0.99-1.00 ms (h200.json's sources; 1.17 ms on torch's default communicator,
// docs/simulator.md). Ring/Simple: launch + latency + 512 MiB / (busbw * 2).
TEST_F(H200Figures, AllGatherAlone) {
  const double alone = all_gather_alone_ms();
  expect_near_pct(alone, 1.00, kFitTolerance);
  CollectiveCost c = collective_cost(model_, all_gather(0).collective, 2);
  ASSERT_NE(c.protocol, nullptr);
  EXPECT_EQ(c.protocol->name, "Simple");
  const double latency_us = c.protocol->base_latency_us + c.protocol->hop_latency_us;
  const double wire_ms = static_cast<double>(512LL << 20) / (model_.nccl_bus_bandwidth_gbps * 2 * 1e9) * 1e3;
  expect_near_pct(alone, (model_.nccl_launch_us + latency_us) * 1e-3 + wire_ms, kFormulaTolerance);
}

TEST_F(H200Figures, GemmBesideAllGather) {
  const double gemm_alone = gemm_alone_ms();
  const double ag_alone = all_gather_alone_ms();
  // As measured: the all-gather launched first on its stream, then the GEMM.
  trace::Trace t =
      run({device(0, {all_gather(0), big_gemm(0, "g")}), device(1, {all_gather(1), big_gemm(0, "g")})});
  const trace::Event& g = only_event(t, "g", 0);
  // contention_factor (1.42) was fitted to the GEMM's measured 1.90 ms beside it.
  expect_near_pct(ms(g.duration_ns()), 1.90, kFitTolerance);
  expect_near_pct(ms(g.duration_ns()), gemm_alone / kept_beside(1), kFormulaTolerance);
  // The all-gather runs at comm_rate_under_compute beside the GEMM, then
  // alone: 1.97 ms (the measured 2.14 ms is for the default communicator's
  // 1.17 ms all-gather, to which comm_rate_under_compute was fitted).
  const double g_end = ms(g.end_ns);
  expect_near_pct(ms(t.makespan_ns()), g_end + ag_alone - model_.comm_rate_under_compute * g_end,
                  kFormulaTolerance);
  EXPECT_EQ(only_event(t, "ag", 0).end_ns, only_event(t, "ag", 1).end_ns);

  // One after the other: the all-gather on the GEMM's stream (measured 2.83 ms
  // with the 1.17 ms all-gather).
  auto serial = [](int64_t rank) {
    sched::Thunk ag = all_gather(rank);
    ag.stream = 0;
    return ag;
  };
  trace::Trace sequential = run({device(0, {big_gemm(0, "g"), serial(0)}), device(1, {big_gemm(0, "g"), serial(1)})});
  expect_near_pct(ms(sequential.makespan_ns()), gemm_alone + ag_alone, kFormulaTolerance);
  EXPECT_LT(t.makespan_ns(), sequential.makespan_ns());
}

// The GEMM beside the all-gather follows contention_factor: 1 - 16/132 * f of
// the compute, for other values of f too (the shipped 1.42 is pinned above;
// up to f = 1.6 the all-gather still runs while the GEMM ends).
TEST_F(H200Figures, GemmBesideAllGatherFollowsContentionFactor) {
  const double gemm_alone = gemm_alone_ms();
  for (double factor : {0.0, 0.7, 1.0, 1.6}) {
    model_.contention_factor = factor;
    trace::Trace t =
        run({device(0, {all_gather(0), big_gemm(0, "g")}), device(1, {all_gather(1), big_gemm(0, "g")})});
    expect_near_pct(ms(only_event(t, "g", 0).duration_ns()), gemm_alone / kept_beside(1), kFormulaTolerance);
  }
}

// Two all-gathers at once on one device pair, on two communication streams,
// split the collective rate: each takes about twice as long as one alone.
TEST_F(H200Figures, TwoAllGathersAtOnceShareTheCollectiveRate) {
  const double alone = all_gather_alone_ms();
  auto second = [](int64_t rank) {
    sched::Thunk ag =
        testing::collective(kComm + 1, Opcode::kAllGather, {0, 1}, rank, 256LL << 20, 512LL << 20, 2, "ag2");
    return ag;
  };
  trace::Trace t = run({device(0, {all_gather(0), second(0)}), device(1, {all_gather(1), second(1)})});
  const trace::Event& a = only_event(t, "ag", 0);
  const trace::Event& b = only_event(t, "ag2", 0);
  EXPECT_LT(b.start_ns, a.end_ns) << "the two must overlap";
  expect_near_pct(ms(t.makespan_ns()), 2 * alone, 0.02);
  EXPECT_GT(ms(a.duration_ns()), 1.9 * alone);
}

}  // namespace
}  // namespace sl::sim
