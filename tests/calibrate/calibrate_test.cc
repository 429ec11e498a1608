// Calibration recovers known device parameters: traces are simulated with a
// "true" model, then calibrated starting from the stock H200 model.

#include "sim/calibrate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "core/hlo/parser.h"
#include "core/hlo/verifier.h"
#include "core/sched/lowering.h"
#include "sim/device_model_json.h"
#include "sim/sim_backend.h"

namespace sl::sim {
namespace {

// GEMMs of two buckets alone, memory-bound adds of two sizes, all-gathers and
// all-reduces of several sizes alone, and a GEMM of the first shape beside a
// large asynchronous all-gather.
constexpr const char* kProgram = R"(
HloModule calibration_probe, num_partitions=2

%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main {
  %a1 = bf16[2048,2048]{1,0} parameter(0)
  %b1 = bf16[2048,2048]{1,0} parameter(1)
  %g1 = bf16[2048,2048]{1,0} dot(%a1, %b1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %a2 = bf16[512,4096]{1,0} parameter(2)
  %b2 = bf16[4096,512]{1,0} parameter(3)
  %g2 = bf16[512,512]{1,0} dot(%a2, %b2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %e1 = f32[16777216]{0} parameter(4)
  %add1 = f32[16777216]{0} add(%e1, %e1)
  %e2 = f32[4194304]{0} parameter(5)
  %add2 = f32[4194304]{0} add(%e2, %e2)
  %s1 = bf16[1024,4096]{1,0} parameter(6)
  %ag1 = bf16[2048,4096]{1,0} all-gather(%s1), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %s2 = bf16[4096,4096]{1,0} parameter(7)
  %ag2 = bf16[8192,4096]{1,0} all-gather(%s2), channel_id=2, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %r1 = f32[4194304]{0} parameter(8)
  %ar1 = f32[4194304]{0} all-reduce(%r1), channel_id=3, replica_groups={{0,1}}, to_apply=%sum, use_global_device_ids=true
  %r2 = f32[16777216]{0} parameter(9)
  %ar2 = f32[16777216]{0} all-reduce(%r2), channel_id=4, replica_groups={{0,1}}, to_apply=%sum, use_global_device_ids=true
  %s3 = bf16[8192,4096]{1,0} parameter(10)
  %ag3-start = (bf16[8192,4096]{1,0}, bf16[16384,4096]{1,0}) all-gather-start(%s3), channel_id=5, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %g3 = bf16[2048,2048]{1,0} dot(%a1, %b1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %ag3-done = bf16[16384,4096]{1,0} all-gather-done(%ag3-start)
  ROOT %out = (bf16[2048,2048]{1,0}, bf16[512,512]{1,0}, f32[16777216]{0}, f32[4194304]{0}, bf16[2048,4096]{1,0}, bf16[8192,4096]{1,0}, f32[4194304]{0}, f32[16777216]{0}, bf16[2048,2048]{1,0}, bf16[16384,4096]{1,0}) tuple(%g1, %g2, %add1, %add2, %ag1, %ag2, %ar1, %ar2, %g3, %ag3-done)
}
)";

DeviceModel stock_h200() {
  Result<DeviceModel> m = load_device_model("h200");
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return *m;
}

// The parameters the traces are generated from; all differ from the stock model.
DeviceModel true_model() {
  DeviceModel m = stock_h200();
  m.gemm_efficiency.values[2][2][2] = 0.74;
  m.gemm_efficiency.values[1][1][2] = 0.45;
  m.hbm_efficiency = 0.80;
  m.nccl_bus_bandwidth_gbps = 200;
  m.nccl_launch_us = 7;
  m.contention_factor = 1.2;
  m.kernel_launch_us = 2.5;
  return m;
}

struct SimulatedRun {
  std::unique_ptr<hlo::Module> module;
  sched::LoweredProgram program;
  trace::Trace trace;
};

// comm_sms 0: GEMMs beside a collective keep every SM (runs recorded before
// the cuda backend confined them).
SimulatedRun simulate(const DeviceModel& model, const char* text, int comm_sms = 0) {
  SimulatedRun run;
  Result<hlo::Module> module = hlo::parse_program(text, "calibration_probe.hlo");
  EXPECT_TRUE(module.is_ok()) << module.status().message();
  EXPECT_TRUE(hlo::verify_status(*module).is_ok()) << hlo::verify_status(*module).message();
  run.module = std::make_unique<hlo::Module>(std::move(*module));
  Result<sched::LoweredProgram> lowered = sched::lower(*run.module, {});
  EXPECT_TRUE(lowered.is_ok()) << lowered.status().message();
  run.program = std::move(*lowered);
  exec::RunOptions options;
  options.comm_sms = comm_sms;
  Result<exec::RunOutput> out = make_sim_backend(model)->run(run.program, options);
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  run.trace = std::move(out->trace);
  return run;
}

const FittedNumber* find_fitted(const Calibration& c, const std::string& key) {
  for (const FittedNumber& f : c.fitted) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

void expect_within(double actual, double expected, double rel, const char* what) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * rel) << what;
}

// The bus bandwidth one ring collective kind runs at: calibrate may move the
// shared figure and each kind's scale, as long as their product holds.
double bus_gbps(const DeviceModel& m, hlo::Opcode op) {
  return m.nccl_bus_bandwidth_gbps * *bandwidth_scale(m, op);
}

// The base model's per-kind ratios differ from 1; kProgram runs all-gathers
// and all-reduces, each of which must come back at its own bandwidth.
void expect_bus_bandwidths(const DeviceModel& m, const DeviceModel& truth, double rel) {
  expect_within(bus_gbps(m, hlo::Opcode::kAllGather), bus_gbps(truth, hlo::Opcode::kAllGather), rel,
                "all-gather bus bandwidth");
  expect_within(bus_gbps(m, hlo::Opcode::kAllReduce), bus_gbps(truth, hlo::Opcode::kAllReduce), rel,
                "all-reduce bus bandwidth");
}

TEST(Calibrate, RecoversKnownParametersFromSimulatedRuns) {
  DeviceModel truth = true_model();
  DeviceModel base = stock_h200();
  SimulatedRun run = simulate(truth, kProgram);
  ASSERT_FALSE(run.trace.events.empty());

  Result<Calibration> c = calibrate_detailed(base, {CalibrationRun{7, &run.trace, &run.program, false}},
                                             {"2026-11-29"});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  const DeviceModel& m = c->model;
  expect_within(m.gemm_efficiency.values[2][2][2], 0.74, 0.02, "large GEMM bucket");
  expect_within(m.gemm_efficiency.values[1][1][2], 0.45, 0.02, "512x512x4096 bucket");
  expect_within(m.hbm_efficiency, 0.80, 0.02, "hbm_efficiency");
  expect_bus_bandwidths(m, truth, 0.02);
  expect_within(m.nccl_launch_us, 7, 0.02, "collective launch");
  expect_within(m.contention_factor, 1.2, 0.02, "contention factor");
  expect_within(m.kernel_launch_us, 2.5, 0.02, "launch gap");
  // Buckets without samples and unfitted numbers stay as in the base model.
  EXPECT_EQ(m.gemm_efficiency.values[0][0][0], base.gemm_efficiency.values[0][0][0]);
  EXPECT_EQ(m.p2p_bandwidth_gbps, base.p2p_bandwidth_gbps);
  EXPECT_EQ(m.comm_rate_under_compute, base.comm_rate_under_compute);

  ASSERT_NE(find_fitted(*c, "contention_factor"), nullptr);
  EXPECT_EQ(find_fitted(*c, "contention_factor")->samples, 2);  // the overlapped GEMM on each device
  EXPECT_EQ(find_fitted(*c, "hbm_efficiency")->samples, 4);     // two adds on two devices
  EXPECT_NE(c->sources.at("hbm_efficiency").find("calibrated from runs 7 on 2026-11-29"), std::string::npos);
}

// GEMMs of one bucket with more or fewer waves for their FLOPs (short and
// long K): each wave's overhead is fitted beside the bucket's efficiency.
TEST(Calibrate, RecoversTheGemmWaveOverhead) {
  constexpr const char* kGemms = R"(
HloModule wave_probe
ENTRY %main {
  %a = bf16[4096,1024]{1,0} parameter(0)
  %b = bf16[1024,4096]{1,0} parameter(1)
  %c = bf16[4096,8192]{1,0} parameter(2)
  %d = bf16[8192,4096]{1,0} parameter(3)
  %e = bf16[2048,4096]{1,0} parameter(4)
  %f = bf16[4096,8192]{1,0} parameter(5)
  %short = bf16[4096,4096]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %long = bf16[4096,4096]{1,0} dot(%c, %d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %wide = bf16[2048,8192]{1,0} dot(%e, %f), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %out = (bf16[4096,4096]{1,0}, bf16[4096,4096]{1,0}, bf16[2048,8192]{1,0}) tuple(%short, %long, %wide)
}
)";
  DeviceModel truth = true_model();
  truth.gemm_wave_overhead_us = 1.5;
  SimulatedRun run = simulate(truth, kGemms);
  DeviceModel base = stock_h200();
  Result<Calibration> c = calibrate_detailed(base, {CalibrationRun{8, &run.trace, &run.program, false}});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  expect_within(c->model.gemm_wave_overhead_us, 1.5, 0.02, "gemm_wave_overhead_us");
  expect_within(c->model.gemm_efficiency.values[2][2][2], 0.74, 0.02, "large GEMM bucket");
  ASSERT_NE(find_fitted(*c, "gemm_wave_overhead_us"), nullptr);
  EXPECT_EQ(find_fitted(*c, "gemm_wave_overhead_us")->samples, 3);

  // One shape: waves follow the work, so the overhead cannot be told apart.
  SimulatedRun one = simulate(truth, kProgram);
  Result<Calibration> single = calibrate_detailed(base, {CalibrationRun{9, &one.trace, &one.program, false}});
  ASSERT_TRUE(single.is_ok()) << single.status().message();
  EXPECT_EQ(find_fitted(*single, "gemm_wave_overhead_us"), nullptr);
  EXPECT_EQ(single->model.gemm_wave_overhead_us, 0);
}

// Each ring collective kind keeps its own bandwidth: the mean goes to
// nccl_bus_bandwidth_gbps, each kind's ratio to its *_bandwidth_scale.
TEST(Calibrate, RecoversBandwidthPerCollectiveKind) {
  DeviceModel truth = true_model();
  truth.all_reduce_bandwidth_scale = 1.25;  // all-reduce 250 GB/s, all-gather 200
  SimulatedRun run = simulate(truth, kProgram);
  Result<Calibration> c = calibrate_detailed(stock_h200(), {CalibrationRun{7, &run.trace, &run.program, false}});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  const DeviceModel& m = c->model;
  expect_within(m.nccl_bus_bandwidth_gbps * m.all_gather_bandwidth_scale, 200, 0.02, "all-gather bus bandwidth");
  expect_within(m.nccl_bus_bandwidth_gbps * m.all_reduce_bandwidth_scale, 250, 0.02, "all-reduce bus bandwidth");
  EXPECT_GT(m.nccl_bus_bandwidth_gbps, 200);
  EXPECT_LT(m.nccl_bus_bandwidth_gbps, 250);
  EXPECT_EQ(m.reduce_scatter_bandwidth_scale, stock_h200().reduce_scatter_bandwidth_scale);  // none ran
  ASSERT_NE(find_fitted(*c, "all_reduce_bandwidth_scale"), nullptr);
  EXPECT_EQ(find_fitted(*c, "reduce_scatter_bandwidth_scale"), nullptr);
}

// GEMMs confined to fewer SMs beside a collective fit their own throughput
// scale, against the same shape alone on every SM; they say nothing of the
// contention factor (which only GEMMs on every SM feel).
TEST(Calibrate, RecoversSmLimitedGemmScale) {
  DeviceModel truth = true_model();
  truth.sm_limited_gemm_scale = 1.08;
  SimulatedRun run = simulate(truth, kProgram, 32);
  DeviceModel base = stock_h200();
  Result<Calibration> c = calibrate_detailed(base, {CalibrationRun{5, &run.trace, &run.program, false, 32}});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  expect_within(c->model.sm_limited_gemm_scale, 1.08, 0.02, "sm_limited_gemm_scale");
  ASSERT_NE(find_fitted(*c, "sm_limited_gemm_scale"), nullptr);
  EXPECT_EQ(find_fitted(*c, "sm_limited_gemm_scale")->samples, 2);  // g3 on each device
  EXPECT_EQ(c->model.contention_factor, base.contention_factor);
  expect_within(c->model.gemm_efficiency.values[2][2][2], 0.74, 0.02, "the confined GEMM stays out of its bucket");

  // Read as a run whose GEMMs kept every SM, the same trace fits no scale.
  Result<Calibration> old = calibrate_detailed(base, {CalibrationRun{5, &run.trace, &run.program, false, 0}});
  ASSERT_TRUE(old.is_ok()) << old.status().message();
  EXPECT_EQ(find_fitted(*old, "sm_limited_gemm_scale"), nullptr);
}

// A confined GEMM that started while its collective already ran took 10-38%
// longer on H200s; one that reached the SMs first did not, and only those
// fit the scale when a shape has both.
TEST(Calibrate, SmLimitedGemmScaleComesFromGemmsThatStartedBeforeTheirCollective) {
  DeviceModel truth = true_model();
  truth.sm_limited_gemm_scale = 1.08;
  SimulatedRun run = simulate(truth, kProgram, 32);
  // The simulator starts g3 after the all-gather (its launch gap), right as
  // an all-reduce ends. On device 0 the all-gather now starts 1 us after g3;
  // device 1's g3, left inside the collectives, runs 30% longer.
  int64_t g3_start_0 = -1;
  for (const trace::Event& e : run.trace.events) {
    if (e.device == 0 && run.trace.instruction_of(e) == "g3") g3_start_0 = e.start_ns;
  }
  ASSERT_GE(g3_start_0, 0);
  for (trace::Event& e : run.trace.events) {
    const std::string& name = run.trace.instruction_of(e);
    if (e.device == 0 && name == "ag3-start") e.start_ns = g3_start_0 + 1000;
    if (e.device == 1 && name == "g3") e.end_ns = e.start_ns + e.duration_ns() * 13 / 10;
  }
  Result<Calibration> c =
      calibrate_detailed(stock_h200(), {CalibrationRun{5, &run.trace, &run.program, false, 32}});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  expect_within(c->model.sm_limited_gemm_scale, 1.08, 0.02, "sm_limited_gemm_scale");
  ASSERT_NE(find_fitted(*c, "sm_limited_gemm_scale"), nullptr);
  EXPECT_NE(find_fitted(*c, "sm_limited_gemm_scale")->detail.find("1 started before their collective"),
            std::string::npos)
      << find_fitted(*c, "sm_limited_gemm_scale")->detail;
}

// All-gathers and reduce-scatters alone (for the collective model), then one
// of each beside a long GEMM that leaves SMs to it.
constexpr const char* kConfinedProgram = R"(
HloModule confined_probe, num_partitions=2
%add {
  %x = bf16[] parameter(0)
  %y = bf16[] parameter(1)
  ROOT %s = bf16[] add(%x, %y)
}
ENTRY %main {
  %s1 = bf16[1024,4096]{1,0} parameter(0)
  %ag1 = bf16[2048,4096]{1,0} all-gather(%s1), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %s2 = bf16[4096,4096]{1,0} parameter(1)
  %ag2 = bf16[8192,4096]{1,0} all-gather(%s2), channel_id=2, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %rs1 = bf16[512,4096]{1,0} reduce-scatter(%s1), channel_id=4, replica_groups={{0,1}}, dimensions={0}, to_apply=%add, use_global_device_ids=true
  %rs2 = bf16[2048,4096]{1,0} reduce-scatter(%s2), channel_id=5, replica_groups={{0,1}}, dimensions={0}, to_apply=%add, use_global_device_ids=true
  %a = bf16[8192,8192]{1,0} parameter(2)
  %b = bf16[8192,8192]{1,0} parameter(3)
  %s3 = bf16[2048,4096]{1,0} parameter(4)
  %ag3-start = (bf16[2048,4096]{1,0}, bf16[4096,4096]{1,0}) all-gather-start(%s3), channel_id=3, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %g = bf16[8192,8192]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %ag3-done = bf16[4096,4096]{1,0} all-gather-done(%ag3-start)
  %rs3-start = ((bf16[4096,4096]{1,0}), bf16[2048,4096]{1,0}) reduce-scatter-start(%s2), channel_id=6, replica_groups={{0,1}}, dimensions={0}, to_apply=%add, use_global_device_ids=true
  %g2 = bf16[8192,8192]{1,0} dot(%g, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %rs3-done = bf16[2048,4096]{1,0} reduce-scatter-done(%rs3-start)
  ROOT %out = (bf16[2048,4096]{1,0}, bf16[8192,4096]{1,0}, bf16[512,4096]{1,0}, bf16[2048,4096]{1,0}, bf16[8192,8192]{1,0}, bf16[4096,4096]{1,0}, bf16[2048,4096]{1,0}) tuple(%ag1, %ag2, %rs1, %rs2, %g2, %ag3-done, %rs3-done)
}
)";

// A collective beside a GEMM confined to fewer SMs keeps SMs of its own but
// shares HBM: its rate there is fitted on its own, per collective kind.
TEST(Calibrate, RecoversTheCollectiveRateBesideAConfinedGemm) {
  DeviceModel truth = true_model();
  truth.all_gather_rate_beside_confined_gemm = 0.8;
  truth.reduce_scatter_rate_beside_confined_gemm = 0.6;
  SimulatedRun run = simulate(truth, kConfinedProgram, 32);
  DeviceModel base = stock_h200();
  Result<Calibration> c = calibrate_detailed(base, {CalibrationRun{6, &run.trace, &run.program, false, 32}});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  expect_within(c->model.all_gather_rate_beside_confined_gemm, 0.8, 0.02, "all_gather_rate_beside_confined_gemm");
  expect_within(c->model.reduce_scatter_rate_beside_confined_gemm, 0.6, 0.02,
                "reduce_scatter_rate_beside_confined_gemm");
  ASSERT_NE(find_fitted(*c, "all_gather_rate_beside_confined_gemm"), nullptr);
  EXPECT_EQ(find_fitted(*c, "all_gather_rate_beside_confined_gemm")->samples, 2);  // ag3 on each device
  ASSERT_NE(find_fitted(*c, "comm_rate_beside_confined_gemm"), nullptr);
  EXPECT_EQ(find_fitted(*c, "comm_rate_beside_confined_gemm")->samples, 4);
  // All-reduces had none: they take the mean of all, between the two.
  const double all = c->model.comm_rate_beside_confined_gemm;
  EXPECT_GT(all, 0.62);
  EXPECT_LT(all, 0.78);
  EXPECT_EQ(c->model.all_reduce_rate_beside_confined_gemm, all);
  EXPECT_EQ(find_fitted(*c, "all_reduce_rate_beside_confined_gemm"), nullptr);

  // Read as a run whose GEMMs kept every SM, nothing was confined.
  Result<Calibration> old = calibrate_detailed(base, {CalibrationRun{6, &run.trace, &run.program, false, 0}});
  ASSERT_TRUE(old.is_ok()) << old.status().message();
  EXPECT_EQ(find_fitted(*old, "comm_rate_beside_confined_gemm"), nullptr);
}

// A permute leaves a GEMM beside it every SM: the two contend, and the
// permute's rate there is comm_rate_under_compute.
TEST(Calibrate, RecoversTheCollectiveRateUnderCompute) {
  constexpr const char* kPermuteBesideGemm = R"(
HloModule permute_probe, num_partitions=2
ENTRY %main {
  %s1 = bf16[2048,4096]{1,0} parameter(0)
  %cp1 = bf16[2048,4096]{1,0} collective-permute(%s1), channel_id=1, source_target_pairs={{0,1},{1,0}}
  %s2 = bf16[4096,4096]{1,0} parameter(1)
  %cp2 = bf16[4096,4096]{1,0} collective-permute(%s2), channel_id=2, source_target_pairs={{0,1},{1,0}}
  %a = bf16[8192,8192]{1,0} parameter(2)
  %b = bf16[8192,8192]{1,0} parameter(3)
  %cp3-start = (bf16[4096,4096]{1,0}, bf16[4096,4096]{1,0}, u32[], u32[]) collective-permute-start(%cp2), channel_id=3, source_target_pairs={{0,1},{1,0}}
  %g = bf16[8192,8192]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %cp3-done = bf16[4096,4096]{1,0} collective-permute-done(%cp3-start)
  ROOT %out = (bf16[2048,4096]{1,0}, bf16[8192,8192]{1,0}, bf16[4096,4096]{1,0}) tuple(%cp1, %g, %cp3-done)
}
)";
  DeviceModel truth = true_model();
  truth.comm_rate_under_compute = 0.7;
  SimulatedRun run = simulate(truth, kPermuteBesideGemm, 32);
  Result<Calibration> c = calibrate_detailed(stock_h200(), {CalibrationRun{10, &run.trace, &run.program, false, 32}});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  expect_within(c->model.comm_rate_under_compute, 0.7, 0.02, "comm_rate_under_compute");
  ASSERT_NE(find_fitted(*c, "comm_rate_under_compute"), nullptr);
  EXPECT_EQ(find_fitted(*c, "comm_rate_under_compute")->samples, 2);  // cp3 on each device
  EXPECT_EQ(find_fitted(*c, "comm_rate_beside_confined_gemm"), nullptr);  // the GEMM kept every SM
}

// A chain of scalar ops: each takes the minimum kernel time, one launch gap
// after the other.
TEST(Calibrate, RecoversMinKernelTimeAndLaunchGap) {
  constexpr const char* kScalars = R"(
HloModule scalars
ENTRY %main {
  %a = s32[] parameter(0)
  %b = s32[] add(%a, %a)
  %c = s32[] multiply(%b, %a)
  %d = s32[] subtract(%c, %b)
  %e = s32[] add(%d, %c)
  %f = s32[] multiply(%e, %d)
  ROOT %g = s32[] add(%f, %e)
}
)";
  DeviceModel truth = true_model();
  truth.min_kernel_us = 1.8;
  SimulatedRun run = simulate(truth, kScalars);
  Result<Calibration> c = calibrate_detailed(stock_h200(), {CalibrationRun{4, &run.trace, &run.program, false}});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  expect_within(c->model.min_kernel_us, 1.8, 0.02, "min_kernel_us");
  expect_within(c->model.kernel_launch_us, 2.5, 0.02, "kernel_launch_us");
  ASSERT_NE(find_fitted(*c, "min_kernel_us"), nullptr);
  EXPECT_EQ(find_fitted(*c, "min_kernel_us")->samples, 6);
}

// A fusion that reads a quarter of its operand through a slice moves that
// quarter, as the simulator costs it (sim/kernel_content.h), not the operand
// whole (the lowering's bytes_accessed): HBM efficiency is fitted from the
// bytes the simulator would move, so the fitted model reproduces the run.
TEST(Calibrate, FitsHbmEfficiencyFromTheBytesAFusionActuallyReads) {
  constexpr const char* kSlicedAdd = R"(
HloModule sliced_add
%quarter_doubled {
  %p = f32[16777216]{0} parameter(0)
  %s = f32[4194304]{0} slice(%p), slice={[0:4194304]}
  ROOT %a = f32[4194304]{0} add(%s, %s)
}
ENTRY %main {
  %x = f32[16777216]{0} parameter(0)
  ROOT %f = f32[4194304]{0} fusion(%x), kind=kLoop, calls=%quarter_doubled
}
)";
  const DeviceModel truth = true_model();
  SimulatedRun run = simulate(truth, kSlicedAdd);
  Result<Calibration> c = calibrate_detailed(stock_h200(), {CalibrationRun{6, &run.trace, &run.program, false}});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  ASSERT_NE(find_fitted(*c, "hbm_efficiency"), nullptr);
  EXPECT_EQ(find_fitted(*c, "hbm_efficiency")->samples, 1);
  // Counting the operand whole (64 MiB read for 16 MiB) would give 2x the
  // true rate, capped at 1.
  expect_within(c->model.hbm_efficiency, 0.80, 0.02, "hbm_efficiency");
}

// Copies on the copy engines (a slice, a concatenation) and on the row-copy
// kernel (an in-place dynamic-update-slice, a dynamic slice) are fitted apart
// from the elementwise rate, which the add sets.
TEST(Calibrate, RecoversCopyBandwidthPerPath) {
  constexpr const char* kCopies = R"(
HloModule copies
ENTRY %main {
  %x = bf16[8192,8192]{1,0} parameter(0)
  %e = bf16[8192,8192]{1,0} add(%x, %x)
  %lo = bf16[4096,8192]{1,0} slice(%x), slice={[0:4096], [0:8192]}
  %hi = bf16[4096,8192]{1,0} slice(%x), slice={[4096:8192], [0:8192]}
  %cat = bf16[8192,8192]{1,0} concatenate(%hi, %lo), dimensions={0}
  %zero = bf16[] constant(0)
  %acc = bf16[8192,8192]{1,0} broadcast(%zero), dimensions={}
  %row = s32[] parameter(1)
  %col = s32[] constant(0)
  %upd = bf16[8192,8192]{1,0} dynamic-update-slice(%acc, %lo, %row, %col)
  %ds = bf16[4096,8192]{1,0} dynamic-slice(%cat, %row, %col), dynamic_slice_sizes={4096,8192}
  ROOT %out = (bf16[8192,8192]{1,0}, bf16[8192,8192]{1,0}, bf16[4096,8192]{1,0}) tuple(%e, %upd, %ds)
}
)";
  DeviceModel truth = true_model();
  truth.copy_engine_bandwidth_scale = 0.85;
  truth.copy_kernel_bandwidth_scale = 0.6;
  SimulatedRun run = simulate(truth, kCopies);
  Result<Calibration> c = calibrate_detailed(stock_h200(), {CalibrationRun{5, &run.trace, &run.program, false}});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  expect_within(c->model.hbm_efficiency, 0.80, 0.02, "hbm_efficiency");
  expect_within(c->model.copy_engine_bandwidth_scale, 0.85, 0.02, "copy_engine_bandwidth_scale");
  expect_within(c->model.copy_kernel_bandwidth_scale, 0.6, 0.02, "copy_kernel_bandwidth_scale");
  ASSERT_NE(find_fitted(*c, "copy_engine_bandwidth_scale"), nullptr);
  EXPECT_EQ(find_fitted(*c, "copy_engine_bandwidth_scale")->samples, 3);  // two slices, the concatenation
  EXPECT_EQ(find_fitted(*c, "copy_kernel_bandwidth_scale")->samples, 2);
}

TEST(Calibrate, StartingFromTheTrueModelChangesNothing) {
  DeviceModel truth = true_model();
  SimulatedRun run = simulate(truth, kProgram);
  Result<DeviceModel> m = calibrate(truth, {CalibrationRun{1, &run.trace, &run.program, false}});
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  expect_within(m->gemm_efficiency.values[2][2][2], 0.74, 0.005, "bucket");
  expect_within(m->hbm_efficiency, 0.80, 0.005, "hbm");
  expect_bus_bandwidths(*m, truth, 0.005);
  expect_within(m->contention_factor, 1.2, 0.005, "contention");
}

// Two equal GEMMs side by side on two streams (after the same GEMM alone,
// which fits its bucket) give back the concurrent-kernel efficiency.
TEST(Calibrate, RecoversConcurrentKernelEfficiencyFromAGemmPair) {
  constexpr const char* kPair = R"(
HloModule pair
ENTRY %main {
  %a = bf16[4096,4096]{1,0} parameter(0)
  %b = bf16[4096,4096]{1,0} parameter(1)
  %alone = bf16[4096,4096]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %left = bf16[4096,4096]{1,0} dot(%alone, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %right = bf16[4096,4096]{1,0} dot(%alone, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}, backend_config={"operation_queue_id":"1"}
  ROOT %out = (bf16[4096,4096]{1,0}, bf16[4096,4096]{1,0}) tuple(%left, %right)
}
)";
  DeviceModel truth = true_model();
  truth.concurrent_kernel_efficiency = 0.7;
  SimulatedRun run = simulate(truth, kPair);
  Result<Calibration> c = calibrate_detailed(stock_h200(), {CalibrationRun{3, &run.trace, &run.program, false}});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  expect_within(c->model.concurrent_kernel_efficiency, 0.7, 0.02, "concurrent kernel efficiency");
  ASSERT_NE(find_fitted(*c, "concurrent_kernel_efficiency"), nullptr);
  EXPECT_EQ(find_fitted(*c, "concurrent_kernel_efficiency")->samples, 1);  // the one pair
}

// A launch that ran as two kernels (e.g. cuBLAS split-K) has two events with
// one correlation id; they count as one GEMM spanning both.
TEST(Calibrate, EventsOfOneLaunchAreOneSample) {
  DeviceModel truth = true_model();
  SimulatedRun run = simulate(truth, kProgram);
  trace::Trace split = run.trace;
  split.events.clear();
  int64_t gemms = 0;
  for (trace::Event e : run.trace.events) {
    if (e.kind != trace::EventKind::kGemm) {
      split.events.push_back(e);
      continue;
    }
    ++gemms;
    trace::Event second = e;
    e.end_ns = e.start_ns + e.duration_ns() * 2 / 3;
    second.start_ns = e.end_ns;
    split.events.push_back(e);
    split.events.push_back(second);
  }
  ASSERT_EQ(gemms, 6);
  Result<DeviceModel> m = calibrate(stock_h200(), {CalibrationRun{1, &split, &run.program, false}});
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  expect_within(m->gemm_efficiency.values[2][2][2], 0.74, 0.02, "large GEMM bucket");
  expect_within(m->gemm_efficiency.values[1][1][2], 0.45, 0.02, "512x512x4096 bucket");
  expect_within(m->contention_factor, 1.2, 0.02, "contention factor");
}

TEST(Calibrate, SimulatingTheFittedModelReproducesTheMeasuredMakespan) {
  DeviceModel truth = true_model();
  SimulatedRun measured = simulate(truth, kProgram);
  Result<DeviceModel> fitted = calibrate(stock_h200(), {CalibrationRun{1, &measured.trace, &measured.program, false}});
  ASSERT_TRUE(fitted.is_ok()) << fitted.status().message();
  SimulatedRun before = simulate(stock_h200(), kProgram);
  SimulatedRun after = simulate(*fitted, kProgram);
  double target = static_cast<double>(measured.trace.makespan_ns());
  EXPECT_NEAR(static_cast<double>(after.trace.makespan_ns()), target, target * 0.01);
  // The stock model is measurably off for this device, so the test can fail.
  EXPECT_GT(std::abs(static_cast<double>(before.trace.makespan_ns()) - target), target * 0.03);
}

TEST(Calibrate, WrittenFileLoadsBackWithSources) {
  DeviceModel truth = true_model();
  SimulatedRun run = simulate(truth, kProgram);
  DeviceModel base = stock_h200();
  Result<Calibration> c = calibrate_detailed(base, {CalibrationRun{3, &run.trace, &run.program, false},
                                                    CalibrationRun{4, &run.trace, &run.program, false}},
                                             {"2026-11-29"});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  std::string path = (std::filesystem::temp_directory_path() /
                      ("sl_calibrate_test_h200-" + std::to_string(::getpid()) + ".json"))
                         .string();
  ASSERT_TRUE(write_device_model(c->model, c->sources, path).is_ok());
  Result<DeviceModel> loaded = load_device_model(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  EXPECT_DOUBLE_EQ(loaded->hbm_efficiency, c->model.hbm_efficiency);
  EXPECT_DOUBLE_EQ(loaded->contention_factor, c->model.contention_factor);
  EXPECT_DOUBLE_EQ(loaded->gemm_efficiency.values[1][1][2], c->model.gemm_efficiency.values[1][1][2]);
  EXPECT_EQ(loaded->sm_count, base.sm_count);
  EXPECT_EQ(loaded->nccl_protocols.size(), base.nccl_protocols.size());

  DeviceSources sources = read_device_sources(path);
  EXPECT_NE(sources.at("contention_factor").find("calibrated from runs 3,4 on 2026-11-29"), std::string::npos);
  EXPECT_NE(sources.at("gemm_efficiency.values").find("calibrated from runs 3,4"), std::string::npos);
  // Unfitted numbers keep the base file's own source.
  EXPECT_EQ(sources.at("sm_count"), read_device_sources(base.file).at("sm_count"));
  EXPECT_EQ(sources.at("nccl_protocols.LL.base_latency_us"),
            read_device_sources(base.file).at("nccl_protocols.LL.base_latency_us"));
  std::filesystem::remove(path);
}

// Four ranks: the ring factors depend on the group size, and collective-permute
// fits the point-to-point bandwidth.
constexpr const char* kFourRanks = R"(
HloModule four_rank_probe, num_partitions=4

ENTRY %main {
  %s1 = bf16[2048,4096]{1,0} parameter(0)
  %ag1 = bf16[8192,4096]{1,0} all-gather(%s1), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  %s2 = bf16[8192,4096]{1,0} parameter(1)
  %ag2 = bf16[32768,4096]{1,0} all-gather(%s2), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  %p1 = f32[4194304]{0} parameter(2)
  %cp1 = f32[4194304]{0} collective-permute(%p1), channel_id=3, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  %p2 = f32[16777216]{0} parameter(3)
  %cp2 = f32[16777216]{0} collective-permute(%p2), channel_id=4, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  ROOT %out = (bf16[8192,4096]{1,0}, bf16[32768,4096]{1,0}, f32[4194304]{0}, f32[16777216]{0}) tuple(%ag1, %ag2, %cp1, %cp2)
}
)";

TEST(Calibrate, FourRankRingAndPointToPoint) {
  DeviceModel truth = stock_h200();
  truth.nccl_bus_bandwidth_gbps = 180;
  truth.p2p_bandwidth_gbps = 150;
  truth.nccl_launch_us = 6;
  SimulatedRun run = simulate(truth, kFourRanks);
  Result<Calibration> c = calibrate_detailed(stock_h200(), {CalibrationRun{1, &run.trace, &run.program, false}});
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  expect_within(c->model.nccl_bus_bandwidth_gbps, 180, 0.02, "ring bus bandwidth, 4 ranks");
  expect_within(c->model.p2p_bandwidth_gbps, 150, 0.02, "point-to-point bandwidth");
  expect_within(c->model.nccl_launch_us, 6, 0.02, "collective launch");
  // No GEMM or kernel ran: those numbers are the base model's.
  EXPECT_EQ(c->model.contention_factor, stock_h200().contention_factor);
  EXPECT_EQ(c->model.hbm_efficiency, stock_h200().hbm_efficiency);
  EXPECT_EQ(find_fitted(*c, "nccl_bus_bandwidth_gbps")->samples, 8);  // 2 sizes x 4 devices
}

TEST(Calibrate, RefusesRunsWithNothingToFit) {
  EXPECT_FALSE(calibrate(stock_h200(), {}).is_ok());
  trace::Trace empty;
  sched::LoweredProgram program;
  Result<DeviceModel> m = calibrate(stock_h200(), {CalibrationRun{1, &empty, &program, false}});
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().message().find("calibrate"), std::string::npos);
}

}  // namespace
}  // namespace sl::sim
