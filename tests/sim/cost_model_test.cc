#include "sim/cost_model.h"

#include <gtest/gtest.h>

#include "core/hlo/module.h"

#include "tests/sim/sim_test_util.h"

namespace sl::sim {
namespace {

using hlo::Opcode;

TEST(CostModel, WaveQuantization) {
  DeviceModel m = testing::simple_model();  // 100 SMs, 1x1 tiles, table = 1
  EXPECT_DOUBLE_EQ(gemm_efficiency(m, {100, 1, 1, 1, hlo::PrimitiveType::kBF16}), 1.0);
  EXPECT_DOUBLE_EQ(gemm_efficiency(m, {101, 1, 1, 1, hlo::PrimitiveType::kBF16}), 101.0 / 200.0);
  EXPECT_DOUBLE_EQ(gemm_efficiency(m, {10, 5, 1, 3, hlo::PrimitiveType::kBF16}), 150.0 / 200.0);
  m.gemm_efficiency.tile_m = 128;
  m.gemm_efficiency.tile_n = 256;
  m.sm_count = 132;
  // 1024x24576: 8 x 96 = 768 tiles over 132 SMs = 5.82 waves -> 6.
  EXPECT_NEAR(gemm_efficiency(m, {1024, 24576, 24576, 1, hlo::PrimitiveType::kBF16}), 768.0 / 792.0, 1e-12);
}

TEST(CostModel, KernelIsMaxOfComputeAndMemoryPlusLaunch) {
  DeviceModel m = testing::simple_model();
  m.kernel_launch_us = 0.01;  // 10 ns
  sched::Thunk k = testing::mem_kernel(0, 300);
  k.flops = 100;
  KernelCost c = kernel_cost(m, k);
  EXPECT_DOUBLE_EQ(c.work_ns, 310);
  EXPECT_DOUBLE_EQ(c.mem_need, 1.0);
  EXPECT_NEAR(c.compute_need, 1.0 / 3.0, 1e-12);
  k.flops = 600;
  c = kernel_cost(m, k);
  EXPECT_DOUBLE_EQ(c.work_ns, 610);
  EXPECT_DOUBLE_EQ(c.mem_need, 0.5);
}

TEST(CostModel, CopiesRunAtTheirPathsBandwidth) {
  DeviceModel m = testing::simple_model();
  m.copy_engine_bandwidth_scale = 0.5;
  m.copy_kernel_bandwidth_scale = 0.25;
  hlo::Instruction slice;
  slice.opcode = Opcode::kSlice;
  slice.slice = {{0, 4, 1}, {0, 8, 1}};
  hlo::Instruction strided = slice;
  strided.slice[1].stride = 2;
  hlo::Instruction update;
  update.opcode = Opcode::kDynamicUpdateSlice;
  hlo::Instruction add;
  add.opcode = Opcode::kAdd;
  sched::Thunk k = testing::mem_kernel(0, 300);
  const double alone = kernel_cost(m, k).work_ns;  // no instruction: a kernel of its own
  k.instruction = &add;
  EXPECT_EQ(copy_path(k), CopyPath::kNone);
  EXPECT_DOUBLE_EQ(kernel_cost(m, k).work_ns, alone);
  k.instruction = &slice;
  EXPECT_EQ(copy_path(k), CopyPath::kCopyEngine);
  EXPECT_DOUBLE_EQ(kernel_cost(m, k).work_ns, 2 * alone);
  k.instruction = &strided;  // not contiguous runs: the strided-copy kernel
  EXPECT_EQ(copy_path(k), CopyPath::kNone);
  k.instruction = &update;
  EXPECT_EQ(copy_path(k), CopyPath::kCopyKernel);
  EXPECT_DOUBLE_EQ(kernel_cost(m, k).work_ns, 4 * alone);
}

TEST(CostModel, GemmUsesTypePeak) {
  DeviceModel m = testing::simple_model();
  m.peak_bf16_tflops = 4e-3;  // 4 flop/ns
  m.peak_tf32_tflops = 2e-3;
  sched::Thunk g = testing::big_gemm(0, 800);
  EXPECT_DOUBLE_EQ(gemm_cost(m, g, false).work_ns, 200);
  g.gemm.type = hlo::PrimitiveType::kF32;
  EXPECT_DOUBLE_EQ(gemm_cost(m, g, false).work_ns, 800);
  EXPECT_DOUBLE_EQ(gemm_cost(m, g, true).work_ns, 400);
  g.flops = 0;  // derived from the dims: 2 * 100 * 1 * 1
  EXPECT_DOUBLE_EQ(gemm_cost(m, g, true).work_ns, 100);
}

// An f32 GEMM XLA rounds to TF32 (DEFAULT precision: GemmDims::tf32) costs
// at the TF32 rate without --allow-tf32, as the cuda backend runs it.
TEST(CostModel, AnF32GemmXlaRoundsToTf32RunsAtTheTf32Rate) {
  DeviceModel m = testing::simple_model();
  m.peak_tf32_tflops = 2e-3;  // 2 flop/ns; f32 is 1
  sched::Thunk g = testing::big_gemm(0, 800);
  g.gemm.type = hlo::PrimitiveType::kF32;
  EXPECT_DOUBLE_EQ(gemm_cost(m, g, false).work_ns, 800);
  g.gemm.tf32 = true;
  EXPECT_DOUBLE_EQ(gemm_cost(m, g, false).work_ns, 400);
  EXPECT_DOUBLE_EQ(gemm_cost(m, g, true).work_ns, 400);
}

// Output tiles that leave SMs idle have their K split over more CTAs, each
// split at least split_k_min_k long: 2 tiles of K = 64 split 4 ways (K/16)
// fill 8 of the 100 SMs; K = 16000 splits 50 ways, every SM. A GEMM whose
// tiles fill the device, or a table without the field, does not split.
TEST(CostModel, FewOutputTilesSplitTheirK) {
  DeviceModel m = testing::simple_model();  // 100 SMs, 1x1 tiles, table = 1
  const sched::GemmDims few{2, 1, 64, 1, hlo::PrimitiveType::kBF16};
  EXPECT_DOUBLE_EQ(gemm_efficiency(m, few), 2.0 / 100.0);
  m.gemm_efficiency.split_k_min_k = 16;
  EXPECT_DOUBLE_EQ(gemm_efficiency(m, few), 8.0 / 100.0);
  EXPECT_DOUBLE_EQ(gemm_efficiency(m, {2, 1, 16000, 1, hlo::PrimitiveType::kBF16}), 1.0);
  EXPECT_DOUBLE_EQ(gemm_efficiency(m, {2, 1, 8, 1, hlo::PrimitiveType::kBF16}), 2.0 / 100.0);
  EXPECT_DOUBLE_EQ(gemm_efficiency(m, {101, 1, 16000, 1, hlo::PrimitiveType::kBF16}), 101.0 / 200.0);
  // On 10 SMs (beside a collective) 2 tiles split 5 ways at most.
  EXPECT_EQ(gemm_waves(m, {2, 1, 16000, 1, hlo::PrimitiveType::kBF16}, 10), 1);
  EXPECT_DOUBLE_EQ(gemm_efficiency(m, {2, 1, 16000, 1, hlo::PrimitiveType::kBF16}, 10), 1.0);
}

// Each wave of tiles adds gemm_wave_overhead_us: 100 tiles are one wave on
// all 100 SMs, two on 50 of them.
TEST(CostModel, GemmWavesAddTheirOverhead) {
  DeviceModel m = testing::simple_model();
  m.gemm_wave_overhead_us = 0.05;  // 50 ns
  sched::Thunk g = testing::big_gemm(0, 800);
  EXPECT_EQ(gemm_waves(m, g.gemm), 1);
  EXPECT_EQ(gemm_waves(m, g.gemm, 50), 2);
  EXPECT_DOUBLE_EQ(gemm_cost(m, g, false).work_ns, 850);
  EXPECT_DOUBLE_EQ(gemm_cost(m, g, false, 50).work_ns, 1600 + 100);
  m.gemm_wave_overhead_us = 0;
  EXPECT_DOUBLE_EQ(gemm_cost(m, g, false).work_ns, 800);
}

TEST(CostModel, RingLatencyAndProtocolChoice) {
  DeviceModel m = testing::simple_model();
  m.nccl_bus_bandwidth_gbps = 100;
  m.nccl_protocols = {NcclProtocol{"LL", 1.0, 0.5, 0.25, 0.25}, NcclProtocol{"Simple", 10.0, 2.0, 1.0, 1.0}};
  sched::CollectiveInfo info;
  info.op = Opcode::kAllReduce;
  const int64_t four[] = {0, 1, 2, 3};
  info.group = four;
  info.bytes_in = info.bytes_out = 4000;
  // 6 steps. LL: 1000 + 6*500 + 4000*6/4 / 25 = 4000 + 240. Simple: 10000 + 12000 + 60.
  CollectiveCost small = collective_cost(m, info, 4);
  EXPECT_EQ(small.protocol->name, "LL");
  EXPECT_DOUBLE_EQ(small.work_ns, 4240);
  info.bytes_in = info.bytes_out = 400'000'000;
  // LL: 4000 + 400e6*1.5/25 = 24,004,000; Simple: 22000 + 400e6*1.5/100 = 6,022,000.
  CollectiveCost big = collective_cost(m, info, 4);
  EXPECT_EQ(big.protocol->name, "Simple");
  EXPECT_DOUBLE_EQ(big.work_ns, 6'022'000);
  EXPECT_NEAR(big.algbw_gbps, 100.0 * 4 / 6, 1e-9);
}

TEST(CostModel, PermuteIsPointToPointAndSingleRankIsACopy) {
  DeviceModel m = testing::simple_model();
  m.p2p_bandwidth_gbps = 2;
  sched::CollectiveInfo info;
  info.op = Opcode::kCollectivePermute;
  const int64_t pair[] = {0, 1};
  info.group = pair;
  info.send_to = 1;
  info.recv_from = 1;
  info.bytes_in = info.bytes_out = 1000;
  EXPECT_DOUBLE_EQ(collective_cost(m, info, 2).work_ns, 500);
  info.send_to = info.recv_from = -1;  // receives zeros: a fill of 1000 B at 1 B/ns
  EXPECT_DOUBLE_EQ(collective_cost(m, info, 2).work_ns, 1000);
  info.op = Opcode::kAllReduce;
  const int64_t one[] = {0};
  info.group = one;
  EXPECT_DOUBLE_EQ(collective_cost(m, info, 1).work_ns, 2000);
}

}  // namespace
}  // namespace sl::sim

namespace sl::sim {
namespace {

TEST(CostModel, Fp8GemmsRunAtTheFp8PeakOrTheF16One) {
  Result<DeviceModel> h200 = load_device_model("h200");
  ASSERT_TRUE(h200.is_ok());
  EXPECT_DOUBLE_EQ(gemm_peak_flops(*h200, hlo::PrimitiveType::kF8E4M3FN, false), 1979e12);
  EXPECT_DOUBLE_EQ(gemm_peak_flops(*h200, hlo::PrimitiveType::kF8E5M2, false), 1979e12);
  Result<DeviceModel> a100 = load_device_model("a100");  // no FP8 tensor cores
  ASSERT_TRUE(a100.is_ok());
  EXPECT_DOUBLE_EQ(a100->peak_fp8_tflops, 0);
  EXPECT_DOUBLE_EQ(gemm_peak_flops(*a100, hlo::PrimitiveType::kF8E4M3FN, false), a100->peak_f16_tflops * 1e12);
}

}  // namespace
}  // namespace sl::sim
