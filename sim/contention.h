#pragma once
// How work running at once on one device slows each other (DESIGN section 5).
// Every running job has a standalone duration and the shares of compute and
// HBM bandwidth it keeps busy alone; its progress rate is 1 when nothing else
// runs and drops when the device is oversubscribed. Rates are piecewise
// constant between changes of the running set (processor sharing).

#include "sim/device_model.h"

namespace sl::sim {

struct DeviceLoad {
  double compute_need = 0;  // sum over running compute kernels
  double mem_need = 0;      // sum over running kernels and collectives
  int kernels = 0;          // running compute kernels (gemm or other)
  int collectives = 0;      // running collectives
  // Share of the SMs that running GEMMs confined to fewer SMs leave free for
  // collectives (the largest of them).
  double left_free = 0;
};

struct DeviceRates {
  double compute_scale = 1;     // applies to kernels with compute need > 0
  double memory_scale = 1;      // applies to work with memory need > 0
  double collective_rate = 1;   // this device's limit on each running collective
};

// - Collectives hold nccl_channels SMs each; kernels keep
//   1 - collectives * channels / SMs * contention_factor of the compute,
//   less what GEMMs confined to fewer SMs left free (left_free) for them.
// - When kernels ask for more compute than is left they share it in
//   proportion to their needs, and oversubscription costs up to
//   (1 - concurrent_kernel_efficiency) of the throughput.
// - HBM is shared in proportion to needs when they add up to more than 1.
// - A collective progresses at comm_rate_under_compute while kernels saturate
//   the SMs (linearly in between), split between concurrent collectives.
//   GEMMs that left SMs free count too: measured on 2 H200s, all-gathers and
//   all-reduces beside them still ran at 0.5-0.9 of their speed alone.
DeviceRates device_rates(const DeviceModel& model, const DeviceLoad& load);

// The progress rate of a kernel with these needs under `rates`.
inline double kernel_rate(const DeviceRates& rates, double compute_need, double mem_need) {
  double rate = 1;
  if (compute_need > 0 && rates.compute_scale < rate) rate = rates.compute_scale;
  if (mem_need > 0 && rates.memory_scale < rate) rate = rates.memory_scale;
  return rate;
}

}  // namespace sl::sim
