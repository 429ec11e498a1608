#include "sim/contention.h"

#include <algorithm>

namespace sl::sim {

DeviceRates device_rates(const DeviceModel& model, const DeviceLoad& load) {
  DeviceRates rates;
  double capacity = 1.0;
  if (load.collectives > 0 && model.sm_count > 0) {
    double sm_share = std::min(1.0, static_cast<double>(load.collectives) * model.nccl_channels / model.sm_count);
    // Never starve kernels completely: a device always retires some work.
    const double taken = std::max(0.0, sm_share * model.contention_factor - load.left_free);
    capacity = std::max(0.05, 1.0 - taken);
  }
  if (load.compute_need > capacity) {
    double scale = capacity / load.compute_need;
    if (load.kernels >= 2) {
      double oversubscription = std::min(1.0, (load.compute_need - capacity) / capacity);
      scale *= 1.0 - (1.0 - model.concurrent_kernel_efficiency) * oversubscription;
    }
    rates.compute_scale = scale;
  }
  if (load.mem_need > 1.0) rates.memory_scale = 1.0 / load.mem_need;

  if (load.collectives > 0) {
    double busy = std::min(1.0, load.compute_need);
    double rate = 1.0 - (1.0 - model.comm_rate_under_compute) * busy;
    rate /= load.collectives;
    rates.collective_rate = std::min(rate, rates.memory_scale);
  }
  return rates;
}

}  // namespace sl::sim
