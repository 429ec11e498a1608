#pragma once
// Standalone costs of thunks on a DeviceModel (docs/simulator.md). The engine
// turns these into progress rates that change with contention, so a cost is
// the work (ns at full speed) plus how much of the device's compute and HBM
// bandwidth the work keeps busy while it runs alone.

#include <cstdint>
#include <string>

#include "core/sched/thunk.h"
#include "sim/device_model.h"
#include "sim/kernel_content.h"

namespace sl::sim {

struct KernelCost {
  double work_ns = 0;       // standalone duration, launch included
  double compute_need = 0;  // fraction of the device's SMs/tensor throughput in use while alone, [0, 1]
  double mem_need = 0;      // fraction of the device's achievable HBM bandwidth in use while alone, [0, 1]
};

struct CollectiveCost {
  double work_ns = 0;       // standalone duration: launch + latency + bytes / algbw
  double mem_need = 0;      // HBM share the collective's copies take on each member
  const NcclProtocol* protocol = nullptr;  // the protocol NCCL's model picks
  double latency_ns = 0;
  double algbw_gbps = 0;
};

// Peak rate in FLOP/s for a GEMM of `type` (tensor cores; f32 uses tf32 only
// when allowed; f8 types peak_fp8_tflops, or the f16 rate without it).
double gemm_peak_flops(const DeviceModel& model, hlo::PrimitiveType type, bool allow_tf32);

// Fraction of peak a GEMM reaches: the table's bucket times the wave
// quantization of its CTA tiles over the SMs it runs on (0: all of them).
double gemm_efficiency(const DeviceModel& model, const sched::GemmDims& dims, int64_t sms = 0);

// Waves of CTA tiles a GEMM runs in on `sms` SMs (0: all of them).
int64_t gemm_waves(const DeviceModel& model, const sched::GemmDims& dims, int64_t sms = 0);

// Whether a GEMM on every SM has a CTA tile for each of them: cuBLAS's
// persistent kernels then hold every SM until their last wave.
bool gemm_fills_device(const DeviceModel& model, const sched::GemmDims& dims);

// SMs a GEMM runs on: all but `comm_sms` when lowering marked it as running
// beside a ring collective (the cuda backend's cuBLASLt SM_COUNT_TARGET), else 0
// (all of them).
int64_t gemm_sms(const DeviceModel& model, const sched::Thunk& thunk, int comm_sms);

// A GEMM on `sms` SMs (0: all) runs at that share of the peak, times
// sm_limited_gemm_scale when it is fewer than all, plus gemm_wave_overhead_us
// a wave, and needs that share of the device's compute. An f32 GEMM runs at
// the TF32 rate where XLA rounds it (GemmDims::tf32), or with `allow_tf32`.
// A library call (a kGemm thunk) also pays cublas_call_us.
KernelCost gemm_cost(const DeviceModel& model, const sched::Thunk& thunk, bool allow_tf32, int64_t sms = 0);
// A cuBLAS or cuBLASLt call: a kGemm thunk, or a fusion XLA runs as one
// (sched::Thunk::fusion_calls_library).
bool is_library_call(const sched::Thunk& thunk);
// The fixed cost of `thunk` as a library call: cublas_call_us for a library
// call, 0 for anything else.
double library_call_ns(const DeviceModel& model, const sched::Thunk& thunk);
// The same for a GEMM of `dims` doing `flops` and moving `bytes` to and from HBM.
KernelCost gemm_cost(const DeviceModel& model, const sched::GemmDims& dims, double flops, double bytes, bool allow_tf32,
                     int64_t sms = 0);

// How the cuda backend moves a kernel thunk's bytes (core/exec/cuda/
// thunk_kernels.cc): copies and reshapes, unit-stride slices and
// concatenations as copies on the copy engines; dynamic slices and updates
// with its row-copy kernel; anything else (elementwise, transposes,
// broadcasts, strided slices) is a kernel of its own.
enum class CopyPath { kNone, kCopyEngine, kCopyKernel };
CopyPath copy_path(const sched::Thunk& thunk);
// The copy path's *_bandwidth_scale; 1 for kNone.
double copy_bandwidth_scale(const DeviceModel& model, CopyPath path);

// Memory-bound at hbm_bandwidth_gbps * hbm_efficiency (times the copy path's
// scale) or compute-bound at kernel_compute_efficiency of the f32 peak,
// whichever is longer, and at least min_kernel_us.
KernelCost kernel_cost(const DeviceModel& model, const sched::Thunk& thunk);

// Transcendental operations per second: transcendental_tops, or when the
// device file has none, 16 SFU results per clock per SM (the CUDA
// programming guide's throughput table for compute capability 7.x-9.0).
double transcendental_rate(const DeviceModel& model);

// A kernel thunk costed by what it does (sim/kernel_content.h): GEMM fusions
// and convolutions as GEMMs on every SM with their prologue/epilogue bytes;
// other work bound by its flops at kernel_compute_efficiency of the f32
// peak, its transcendentals at transcendental_rate, or its bytes, whichever
// is longest; kThunk work exactly as kernel_cost.
KernelCost content_cost(const DeviceModel& model, const sched::Thunk& thunk, const KernelWork& work, bool allow_tf32);

// What content_cost takes the longest of for work that is not a GEMM, alone
// on every SM: its compute (flops or transcendentals, the busier) and its
// bytes at hbm_bandwidth_gbps * hbm_efficiency, before the copy path's scale
// and min_kernel_us. Calibration fits the model through these.
struct ContentTimes {
  double compute_ns = 0;
  double memory_ns = 0;
};
ContentTimes content_times(const DeviceModel& model, const KernelWork& work);

// NCCL's ring model for a group of `group_size` ranks: the cheapest protocol's
// base latency + steps * hop latency + bytes / algbw, with
// algbw = busbw * n / steps (steps = n-1 for all-gather and reduce-scatter,
// 2(n-1) for all-reduce); collective-permute is point to point.
CollectiveCost collective_cost(const DeviceModel& model, const sched::CollectiveInfo& info, int64_t group_size);

}  // namespace sl::sim
