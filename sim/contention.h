#pragma once
// How work running at once on one device slows each other (docs/simulator.md).
// Every running job has a standalone duration and the shares of compute and
// HBM it keeps busy alone; its progress rate is 1 when nothing else runs and
// drops when the device is oversubscribed. Rates are piecewise constant
// between changes of the running set (processor sharing for HBM and
// collectives, first come first served for compute).

#include <span>

#include "sim/device_model.h"

namespace sl::sim {

struct DeviceLoad {
  double compute_need = 0;  // sum over running compute kernels that may use every SM
  double mem_need = 0;      // sum over running kernels and collectives
  int kernels = 0;          // running compute kernels (gemm or other)
  int collectives = 0;      // running collectives
  // Share of the SMs that running GEMMs confined to fewer SMs leave free for
  // collectives (the largest of them).
  double left_free = 0;
};

struct DeviceRates {
  double kernel_capacity = 1;   // share of the compute the kernels may split (grant_compute)
  double memory_scale = 1;      // applies to work with memory need > 0
  double collective_rate = 1;   // this device's limit on each running collective (collective_rate())
  bool beside_confined_gemm = false;  // a GEMM confined to fewer SMs runs
};

// - Collectives hold nccl_channels SMs each; kernels keep
//   1 - collectives * channels / SMs * contention_factor of the compute,
//   less what GEMMs confined to fewer SMs left free (left_free) for them.
// - HBM is shared in proportion to needs when they add up to more than 1.
// - A collective progresses at comm_rate_under_compute while kernels saturate
//   the SMs (linearly in between), split between concurrent collectives.
//   GEMMs that left SMs free (confined to fewer SMs) do not count: on 2
//   H200s, with NCCL's kernels launched one CTA a cluster as the cuda
//   backend does, all-gathers and all-reduces beside them ran within 10% of
//   their speed alone (with NCCL's default clusters of 4 CTAs, at 0.5-0.9).
//   While one runs, a collective progresses at its kind's
//   comm_rate_beside_confined_gemm.
DeviceRates device_rates(const DeviceModel& model, const DeviceLoad& load);

// This device's limit on a running collective of kind `op`.
double collective_rate(const DeviceModel& model, const DeviceRates& rates, hlo::Opcode op);

// Compute scales of the running kernels, whose needs are given in the order
// they started: each takes what it needs of what the earlier ones left of
// `capacity` (the block scheduler hands out an earlier kernel's CTAs first,
// and a persistent GEMM keeps its SMs until it ends), so a kernel that fills
// the device holds a later one back; measured on an H200, the second of two
// GEMMs on two streams starts as the first ends. While kernels ask for more
// than there is, the ones that run lose up to (1 - concurrent_kernel_efficiency)
// of their throughput (the waiting kernel's first CTAs already take SMs as
// the running one's last wave retires: two such GEMMs on two streams took
// 1.7-2.2% longer than on one stream). scales[i] is kernel i's granted share
// over its need (1 for no need).
void grant_compute(const DeviceModel& model, double capacity, std::span<const double> needs,
                   std::span<double> scales);

// The progress rate of a kernel with these needs, given its compute scale.
inline double kernel_rate(const DeviceRates& rates, double compute_scale, double compute_need, double mem_need) {
  double rate = 1;
  if (compute_need > 0 && compute_scale < rate) rate = compute_scale;
  if (mem_need > 0 && rates.memory_scale < rate) rate = rates.memory_scale;
  return rate;
}

}  // namespace sl::sim
