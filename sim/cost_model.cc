#include "sim/cost_model.h"

#include <algorithm>
#include <limits>

#include "core/hlo/module.h"
#include "core/sched/collective_overlap.h"

namespace sl::sim {
namespace {

using hlo::Opcode;
using hlo::PrimitiveType;

constexpr double kNsPerS = 1e9;

int64_t ceil_div(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

double hbm_bytes_per_ns(const DeviceModel& model) {
  return model.hbm_bandwidth_gbps * model.hbm_efficiency;  // GB/s == bytes/ns
}

// Splits a standalone duration into the shares of compute and HBM it uses.
// A kernel runs at least min_ns, using less of the device for it.
KernelCost make_cost(double compute_ns, double memory_ns, double launch_ns, double occupancy, double min_ns) {
  KernelCost cost;
  double busy = std::max({compute_ns, memory_ns, min_ns});
  cost.work_ns = busy + launch_ns;
  if (busy > 0) {
    cost.compute_need = std::clamp(compute_ns / busy * occupancy, 0.0, 1.0);
    cost.mem_need = std::clamp(memory_ns / busy, 0.0, 1.0);
  }
  return cost;
}

int64_t output_tiles(const GemmEfficiencyTable& table, const sched::GemmDims& dims) {
  return ceil_div(std::max<int64_t>(dims.m, 1), table.tile_m) * ceil_div(std::max<int64_t>(dims.n, 1), table.tile_n) *
         std::max<int64_t>(dims.batch, 1);
}

int64_t sms_or_all(const DeviceModel& model, int64_t sms) {
  return std::max<int64_t>(sms > 0 ? std::min<int64_t>(sms, model.sm_count) : model.sm_count, 1);
}

// CTAs a GEMM runs on `sms` SMs: its output tiles, times the K splits the
// library takes when those leave SMs idle (as many as fill them, each at
// least split_k_min_k long). A weight gradient of a few tiles over a long
// batch K runs on every SM this way, not on a few.
int64_t gemm_tiles(const DeviceModel& model, const sched::GemmDims& dims, int64_t sms) {
  const GemmEfficiencyTable& table = model.gemm_efficiency;
  const int64_t tiles = output_tiles(table, dims);
  sms = sms_or_all(model, sms);
  if (table.split_k_min_k <= 0 || tiles >= sms) return tiles;
  const int64_t splits = std::clamp<int64_t>(dims.k / table.split_k_min_k, 1, sms / tiles);
  return tiles * splits;
}

}  // namespace

double gemm_peak_flops(const DeviceModel& model, PrimitiveType type, bool allow_tf32) {
  double tflops = model.peak_f32_tflops;
  switch (type) {
    case PrimitiveType::kBF16: tflops = model.peak_bf16_tflops; break;
    case PrimitiveType::kF16: tflops = model.peak_f16_tflops; break;
    case PrimitiveType::kF32: tflops = allow_tf32 ? model.peak_tf32_tflops : model.peak_f32_tflops; break;
    case PrimitiveType::kF8E5M2: case PrimitiveType::kF8E4M3: case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ: case PrimitiveType::kF8E5M2FNUZ: case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF8E3M4:
      tflops = model.peak_fp8_tflops > 0 ? model.peak_fp8_tflops : model.peak_f16_tflops;
      break;
    default: break;
  }
  return tflops * 1e12;
}

int64_t gemm_waves(const DeviceModel& model, const sched::GemmDims& dims, int64_t sms) {
  return ceil_div(gemm_tiles(model, dims, sms), sms_or_all(model, sms));
}

double gemm_efficiency(const DeviceModel& model, const sched::GemmDims& dims, int64_t sms) {
  const GemmEfficiencyTable& table = model.gemm_efficiency;
  double base = table.lookup(dims.m, dims.n, dims.k);
  const int64_t tiles = gemm_tiles(model, dims, sms);
  sms = sms_or_all(model, sms);
  int64_t waves = ceil_div(tiles, sms);
  double quantization = waves > 0 ? static_cast<double>(tiles) / static_cast<double>(waves * sms) : 1.0;
  return base * quantization;
}

bool gemm_fills_device(const DeviceModel& model, const sched::GemmDims& dims) {
  return output_tiles(model.gemm_efficiency, dims) >= std::max<int64_t>(model.sm_count, 1);
}

int64_t gemm_sms(const DeviceModel& model, const sched::Thunk& thunk, int comm_sms) {
  return sched::gemm_sm_limit(thunk, model.sm_count, comm_sms);
}

KernelCost gemm_cost(const DeviceModel& model, const sched::Thunk& thunk, bool allow_tf32, int64_t sms) {
  const sched::GemmDims& d = thunk.gemm;
  double flops = thunk.flops > 0 ? static_cast<double>(thunk.flops)
                                 : 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) *
                                       static_cast<double>(d.k) * static_cast<double>(std::max<int64_t>(d.batch, 1));
  KernelCost cost = gemm_cost(model, d, flops, static_cast<double>(thunk.bytes_accessed), allow_tf32, sms);
  // The call's fixed cost comes on top, at the product's shares of the device.
  cost.work_ns += library_call_ns(model, thunk);
  return cost;
}

bool is_library_call(const sched::Thunk& thunk) {
  return thunk.kind == sched::ThunkKind::kGemm || thunk.fusion_calls_library;
}

double library_call_ns(const DeviceModel& model, const sched::Thunk& thunk) {
  return is_library_call(thunk) ? model.cublas_call_us * 1e3 : 0;
}

KernelCost gemm_cost(const DeviceModel& model, const sched::GemmDims& d, double flops, double bytes, bool allow_tf32,
                     int64_t sms) {
  const int64_t all = std::max(model.sm_count, 1);
  const bool limited = sms > 0 && sms < all;
  const double sm_share = limited ? static_cast<double>(sms) / static_cast<double>(all) : 1.0;
  // f32 GEMMs at the TF32 rate where XLA rounds them (as the cuda backend
  // runs them), or all of them with allow_tf32.
  const double peak = gemm_peak_flops(model, d.type, allow_tf32 || d.tf32);
  double rate = peak * gemm_efficiency(model, d, limited ? sms : 0) * sm_share *
                (limited ? model.sm_limited_gemm_scale : 1.0);
  double compute_ns = rate > 0 ? flops / rate * kNsPerS : 0;
  if (compute_ns > 0) {
    compute_ns += static_cast<double>(gemm_waves(model, d, limited ? sms : 0)) * model.gemm_wave_overhead_us * 1e3;
  }
  double memory_ns = bytes / hbm_bytes_per_ns(model);
  const int64_t tiles = gemm_tiles(model, d, limited ? sms : 0);
  double occupancy = std::min(sm_share, static_cast<double>(tiles) / static_cast<double>(all));
  return make_cost(compute_ns, memory_ns, model.kernel_launch_us * 1e3, occupancy, model.min_kernel_us * 1e3);
}

CopyPath copy_path(const sched::Thunk& thunk) {
  if (thunk.kind != sched::ThunkKind::kKernel || thunk.instruction == nullptr) return CopyPath::kNone;
  const hlo::Instruction& inst = *thunk.instruction;
  switch (inst.async_wrapped ? *inst.async_wrapped : inst.opcode) {
    case hlo::Opcode::kCopy:
    case hlo::Opcode::kReshape:
    case hlo::Opcode::kBitcast:
    case hlo::Opcode::kConcatenate:
      return CopyPath::kCopyEngine;
    case hlo::Opcode::kSlice:
      for (const hlo::SliceDim& d : inst.slice) {
        if (d.stride != 1) return CopyPath::kNone;
      }
      return CopyPath::kCopyEngine;
    case hlo::Opcode::kDynamicSlice:
    case hlo::Opcode::kDynamicUpdateSlice:
      return CopyPath::kCopyKernel;
    default:
      return CopyPath::kNone;
  }
}

double copy_bandwidth_scale(const DeviceModel& model, CopyPath path) {
  switch (path) {
    case CopyPath::kCopyEngine: return model.copy_engine_bandwidth_scale;
    case CopyPath::kCopyKernel: return model.copy_kernel_bandwidth_scale;
    case CopyPath::kNone: break;
  }
  return 1;
}

KernelCost kernel_cost(const DeviceModel& model, const sched::Thunk& thunk) {
  double rate = model.peak_f32_tflops * 1e12 * model.kernel_compute_efficiency;
  double compute_ns = static_cast<double>(thunk.flops) / rate * kNsPerS;
  double memory_ns = static_cast<double>(thunk.bytes_accessed) /
                     (hbm_bytes_per_ns(model) * copy_bandwidth_scale(model, copy_path(thunk)));
  return make_cost(compute_ns, memory_ns, model.kernel_launch_us * 1e3, 1.0, model.min_kernel_us * 1e3);
}

double transcendental_rate(const DeviceModel& model) {
  if (model.transcendental_tops > 0) return model.transcendental_tops * 1e12;
  // The CUDA programming guide's SFU throughput: 16 results per clock per SM.
  return static_cast<double>(model.sm_count) * 16.0 * model.clock_mhz * 1e6;
}

KernelCost content_cost(const DeviceModel& model, const sched::Thunk& thunk, const KernelWork& work, bool allow_tf32) {
  switch (work.work_class) {
    case WorkClass::kThunk:
      return kernel_cost(model, thunk);
    case WorkClass::kGemm:
    case WorkClass::kConvolution: {
      KernelCost cost = gemm_cost(model, work.gemm, work.flops, work.bytes(), allow_tf32, 0);
      cost.work_ns += library_call_ns(model, thunk);  // a fusion XLA runs as a cuBLAS call
      return cost;
    }
    default:
      break;
  }
  const ContentTimes times = content_times(model, work);
  const double memory_ns = times.memory_ns / copy_bandwidth_scale(model, copy_path(thunk));
  return make_cost(times.compute_ns, memory_ns, model.kernel_launch_us * 1e3, 1.0, model.min_kernel_us * 1e3);
}

ContentTimes content_times(const DeviceModel& model, const KernelWork& work) {
  // The FMA pipes and the SFU work side by side: the busier one bounds.
  const double flop_rate = model.peak_f32_tflops * 1e12 * model.kernel_compute_efficiency;
  const double sfu_rate = transcendental_rate(model);
  ContentTimes t;
  t.compute_ns = flop_rate > 0 ? work.flops / flop_rate * kNsPerS : 0;
  if (sfu_rate > 0) t.compute_ns = std::max(t.compute_ns, work.transcendentals / sfu_rate * kNsPerS);
  t.memory_ns = work.bytes() / hbm_bytes_per_ns(model);
  return t;
}

CollectiveCost collective_cost(const DeviceModel& model, const sched::CollectiveInfo& info, int64_t group_size) {
  CollectiveCost cost;
  const double launch_ns = model.nccl_launch_us * 1e3;
  const double n = static_cast<double>(std::max<int64_t>(group_size, 1));
  double local_bytes = static_cast<double>(info.bytes_in + info.bytes_out);

  // One rank, or a permute with no peers: a local copy (or zero fill).
  bool permute = info.op == Opcode::kCollectivePermute;
  bool no_peers = permute ? (info.send_to < 0 && info.recv_from < 0) : group_size <= 1;
  if (no_peers) {
    double copy_ns = (permute ? static_cast<double>(info.bytes_out) : local_bytes) / hbm_bytes_per_ns(model);
    cost.work_ns = launch_ns + copy_ns;
    cost.mem_need = copy_ns > 0 ? 1.0 : 0.0;
    return cost;
  }

  double bytes = 0;      // nccl-tests' size S
  double steps = 1;      // ring steps
  double bus_to_alg = 1; // algbw = busbw * bus_to_alg
  double bus_bw = model.nccl_bus_bandwidth_gbps;
  if (const double* scale = bandwidth_scale(model, info.op)) bus_bw *= *scale;
  switch (info.op) {
    case Opcode::kAllGather:
      bytes = static_cast<double>(info.bytes_out);
      steps = n - 1;
      bus_to_alg = n / (n - 1);
      break;
    case Opcode::kReduceScatter:
      bytes = static_cast<double>(info.bytes_in);
      steps = n - 1;
      bus_to_alg = n / (n - 1);
      break;
    case Opcode::kAllReduce:
      bytes = static_cast<double>(info.bytes_in);
      steps = 2 * (n - 1);
      bus_to_alg = n / (2 * (n - 1));
      break;
    default:  // collective-permute: send and receive at once on separate links
      bytes = static_cast<double>(std::max(info.send_to >= 0 ? info.bytes_in : 0, info.recv_from >= 0 ? info.bytes_out : 0));
      steps = 1;
      bus_to_alg = 1;
      bus_bw = model.p2p_bandwidth_gbps;
      break;
  }

  double best = std::numeric_limits<double>::infinity();
  for (const NcclProtocol& p : model.nccl_protocols) {
    double fraction = info.op == Opcode::kAllReduce ? p.all_reduce_bandwidth_fraction : p.bandwidth_fraction;
    double algbw = bus_bw * fraction * bus_to_alg;  // GB/s == bytes/ns
    double latency_ns = (p.base_latency_us + steps * p.hop_latency_us) * 1e3;
    double t = latency_ns + bytes / algbw;
    if (t < best) {
      best = t;
      cost.protocol = &p;
      cost.latency_ns = latency_ns;
      cost.algbw_gbps = algbw;
    }
  }
  cost.work_ns = launch_ns + best;
  double transfer_ns = best - cost.latency_ns;
  cost.mem_need = transfer_ns > 0 ? std::min(1.0, local_bytes / transfer_ns / hbm_bytes_per_ns(model)) : 0.0;
  return cost;
}

}  // namespace sl::sim
