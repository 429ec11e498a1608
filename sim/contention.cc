#include "sim/contention.h"

#include <algorithm>

namespace sl::sim {

DeviceRates device_rates(const DeviceModel& model, const DeviceLoad& load) {
  DeviceRates rates;
  if (load.collectives > 0 && model.sm_count > 0) {
    double sm_share = std::min(1.0, static_cast<double>(load.collectives) * model.nccl_channels / model.sm_count);
    const double taken = std::max(0.0, sm_share * model.contention_factor - load.left_free);
    // Never starve kernels completely: a device always retires some work.
    rates.kernel_capacity = std::max(0.05, 1.0 - taken);
  }
  if (load.mem_need > 1.0) rates.memory_scale = 1.0 / load.mem_need;

  if (load.collectives > 0) {
    double busy = std::min(1.0, load.compute_need);
    double rate = 1.0 - (1.0 - model.comm_rate_under_compute) * busy;
    rates.collective_rate = rate / load.collectives;
    rates.beside_confined_gemm = load.left_free > 0;
  }
  return rates;
}

double collective_rate(const DeviceModel& model, const DeviceRates& rates, hlo::Opcode op) {
  double rate = rates.collective_rate;
  if (rates.beside_confined_gemm) rate *= comm_rate_beside_confined_gemm(model, op);
  return std::min(rate, rates.memory_scale);
}

void grant_compute(const DeviceModel& model, double capacity, std::span<const double> needs,
                   std::span<double> scales) {
  double left = capacity, total_need = 0;
  int computing = 0;
  for (size_t i = 0; i < needs.size(); ++i) {
    total_need += needs[i];
    if (needs[i] <= 0) {
      scales[i] = 1;
      continue;
    }
    const double grant = std::min(needs[i], left);
    left -= grant;
    scales[i] = grant / needs[i];
    ++computing;
  }
  if (computing < 2 || total_need <= capacity) return;
  const double oversubscription = std::min(1.0, (total_need - capacity) / capacity);
  const double factor = 1.0 - (1.0 - model.concurrent_kernel_efficiency) * oversubscription;
  for (size_t i = 0; i < needs.size(); ++i) {
    if (needs[i] > 0) scales[i] *= factor;
  }
}

}  // namespace sl::sim
