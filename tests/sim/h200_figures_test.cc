// docs/simulator.md: the H200 measurements the shipped model must reproduce
// within 15% (cuBLAS via torch, NCCL 2.28, 2 GPUs).
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

constexpr double kTolerance = 0.15;
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
  static void expect_near_pct(double actual_ms, double expected_ms) {
    EXPECT_NEAR(actual_ms, expected_ms, expected_ms * kTolerance) << "simulated " << actual_ms << " ms";
  }
  DeviceModel model_;
};

TEST_F(H200Figures, GemmAlone) {
  trace::Trace t = run({device(0, {big_gemm(0, "g")})});
  expect_near_pct(ms(t.makespan_ns()), 1.57);
  // 814 TFLOP/s class: within 15% of the measured rate.
  double tflops = 2.0 * 1024 * 24576 * 24576 / (ms(t.makespan_ns()) * 1e-3) / 1e12;
  EXPECT_NEAR(tflops, 790, 790 * kTolerance);
}

TEST_F(H200Figures, TwoGemmsOneStreamAndTwoStreams) {
  trace::Trace one = run({device(0, {big_gemm(0, "g1"), big_gemm(0, "g2")})});
  trace::Trace two = run({device(0, {big_gemm(0, "g1"), big_gemm(1, "g2")})});
  expect_near_pct(ms(one.makespan_ns()), 3.29);
  expect_near_pct(ms(two.makespan_ns()), 3.58);
  EXPECT_GE(two.makespan_ns(), one.makespan_ns()) << "two saturating GEMMs gain nothing from two streams";
}

// The reference 1.17 ms (docs/simulator.md) ran on torch's default communicator. The shipped model's
// NCCL figures are for the one-CTA-a-cluster communicators the cuda backend
// makes by default, on which torch ran this all-gather in 0.99-1.00 ms
// (h200.json's sources): 1.00 ms simulated, still within this test's 15%.
TEST_F(H200Figures, AllGatherAlone) {
  trace::Trace t = run({device(0, {all_gather(0)}), device(1, {all_gather(1)})});
  expect_near_pct(ms(t.makespan_ns()), 1.17);
  CollectiveCost c = collective_cost(model_, all_gather(0).collective, 2);
  ASSERT_NE(c.protocol, nullptr);
  EXPECT_EQ(c.protocol->name, "Simple");
}

TEST_F(H200Figures, GemmBesideAllGather) {
  // As measured: the all-gather launched first on its stream, then the GEMM.
  trace::Trace t =
      run({device(0, {all_gather(0), big_gemm(0, "g")}), device(1, {all_gather(1), big_gemm(0, "g")})});
  const trace::Event& g = only_event(t, "g", 0);
  expect_near_pct(ms(g.duration_ns()), 1.90);
  expect_near_pct(ms(t.makespan_ns()), 2.14);
  EXPECT_EQ(only_event(t, "ag", 0).end_ns, only_event(t, "ag", 1).end_ns);

  // One after the other: the all-gather on the GEMM's stream.
  auto serial = [](int64_t rank) {
    sched::Thunk ag = all_gather(rank);
    ag.stream = 0;
    return ag;
  };
  trace::Trace sequential = run({device(0, {big_gemm(0, "g"), serial(0)}), device(1, {big_gemm(0, "g"), serial(1)})});
  expect_near_pct(ms(sequential.makespan_ns()), 2.83);
  EXPECT_LT(t.makespan_ns(), sequential.makespan_ns());
}

}  // namespace
}  // namespace sl::sim
