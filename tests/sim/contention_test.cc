// device_rates on hand-made loads: how concurrent collectives on one device
// share its collective rate.

#include "sim/contention.h"

#include <gtest/gtest.h>

namespace sl::sim {
namespace {

DeviceModel small_model() {
  DeviceModel m;
  m.sm_count = 100;
  m.nccl_channels = 10;
  m.contention_factor = 1;
  m.comm_rate_under_compute = 0.5;
  return m;
}

TEST(Contention, OneCollectiveAloneRunsAtFullRate) {
  DeviceLoad load;
  load.collectives = 1;
  DeviceRates r = device_rates(small_model(), load);
  EXPECT_DOUBLE_EQ(r.collective_rate, 1.0);
  EXPECT_DOUBLE_EQ(collective_rate(small_model(), r, hlo::Opcode::kAllGather), 1.0);
}

TEST(Contention, TwoCollectivesOnOneDeviceShareTheRate) {
  DeviceLoad load;
  load.collectives = 2;
  DeviceRates r = device_rates(small_model(), load);
  EXPECT_DOUBLE_EQ(r.collective_rate, 0.5);
  EXPECT_DOUBLE_EQ(collective_rate(small_model(), r, hlo::Opcode::kAllReduce), 0.5);
  // Kernels lose the SMs of both: 2 * 10 channels of 100 SMs.
  EXPECT_DOUBLE_EQ(r.kernel_capacity, 0.8);
}

TEST(Contention, SharedRateUnderSaturatingCompute) {
  // Alone beside compute that fills the SMs: 1 - (1 - 0.5) * 1 = 0.5;
  // three at once split that three ways.
  DeviceLoad load;
  load.compute_need = 1.5;  // capped at 1
  load.kernels = 2;
  load.collectives = 1;
  EXPECT_DOUBLE_EQ(device_rates(small_model(), load).collective_rate, 0.5);
  load.collectives = 3;
  DeviceRates r = device_rates(small_model(), load);
  EXPECT_DOUBLE_EQ(r.collective_rate, 0.5 / 3);
  EXPECT_DOUBLE_EQ(collective_rate(small_model(), r, hlo::Opcode::kReduceScatter), 0.5 / 3);
}

}  // namespace
}  // namespace sl::sim
