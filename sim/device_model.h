#pragma once
// A GPU as the simulator sees it (docs/simulator.md): peak rates, memory and
// link bandwidths, launch overheads, NCCL's protocol latencies, a GEMM
// efficiency table and the contention factors. Loaded from
// assets/devices/<name>.json, where every number carries its source.

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/hlo/opcode.h"

namespace sl::sim {

// One NCCL protocol (LL, LL128, Simple) on the ring algorithm, intra-node.
struct NcclProtocol {
  std::string name;
  double base_latency_us = 0;         // NCCL tuning: base latency
  double hop_latency_us = 0;          // NCCL tuning: per-step NVLink latency
  double bandwidth_fraction = 1;      // of the Simple bus bandwidth
  double all_reduce_bandwidth_fraction = 1;
};

// GEMM efficiency over (m, n, k) buckets. A dimension falls in bucket i =
// number of edges <= dim; values[im][in][ik] is the fraction of peak reached
// before wave quantization.
struct GemmEfficiencyTable {
  std::vector<int64_t> m_edges, n_edges, k_edges;
  std::vector<std::vector<std::vector<double>>> values;
  int64_t tile_m = 128;  // CTA tile for wave quantization
  int64_t tile_n = 256;
  // A GEMM whose output tiles leave SMs idle has its K split over more CTAs
  // (cuBLAS's split-K, Triton's split_k), each split at least this long in
  // K; 0: never split.
  int64_t split_k_min_k = 0;
  double lookup(int64_t m, int64_t n, int64_t k) const;
};

struct DeviceModel {
  std::string name;         // "h200"
  std::string description;  // "NVIDIA H200 SXM 141GB"
  std::string file;         // where it was loaded from; empty when built in code

  int sm_count = 0;
  double clock_mhz = 0;
  double peak_bf16_tflops = 0;   // dense tensor core
  double peak_f16_tflops = 0;
  double peak_tf32_tflops = 0;
  double peak_f32_tflops = 0;    // CUDA cores, non-tensor
  // Dense FP8 tensor core rate (f8e4m3 / f8e5m2 operands). Optional in device
  // files: 0 (no FP8 tensor cores) runs FP8 GEMMs at the f16 rate.
  double peak_fp8_tflops = 0;
  double hbm_bandwidth_gbps = 0; // GB/s (1e9)
  double hbm_efficiency = 1;     // achievable fraction for streaming kernels
  double kernel_compute_efficiency = 1;  // non-GEMM kernels, fraction of f32 peak
  // exp, log, rsqrt, tanh, ... per second on the SFUs, in 1e12. Optional in
  // device files: 0 means sm_count * 16 a clock (transcendental_rate()).
  double transcendental_tops = 0;

  double nvlink_bandwidth_per_link_gbps = 0;  // one direction
  int nvlink_links = 0;
  double nccl_bus_bandwidth_gbps = 0;  // ring/Simple bus bandwidth reached by NCCL
  double p2p_bandwidth_gbps = 0;       // collective-permute (send/recv)
  // Bus bandwidth of each collective kind relative to nccl_bus_bandwidth_gbps
  // (on H200 NVLink a reduce-scatter moves about 10% slower than an
  // all-gather: it reduces as it goes). Optional in device files: 1 if absent.
  double all_gather_bandwidth_scale = 1;
  double reduce_scatter_bandwidth_scale = 1;
  double all_reduce_bandwidth_scale = 1;
  int nccl_channels = 0;
  std::vector<NcclProtocol> nccl_protocols;

  double kernel_launch_us = 0;
  // The shortest a kernel runs, however little it does (a scalar add takes
  // about 2 us on an H200 by CUPTI). Optional in device files: 0.
  double min_kernel_us = 0;
  // A cuBLAS call's fixed cost on top of its product (its setup and, where it
  // splits K, the reduction kernel): small calls run about this much longer
  // than their flops and bytes say. Optional in device files: 0.
  double cublas_call_us = 0;
  double nccl_launch_us = 0;
  // XLA executables (docs/simulator.md, "Command buffers", "Host issue").
  // Optional in device files: stream_kernel_gap_us, graph_launch_us and
  // graph_node_gap_us default to kernel_launch_us, concurrency to 1, the
  // host costs to 0 (a host never behind the GPU), host_graph_launch_us and
  // host_dynamic_slice_us to host_kernel_launch_us.
  double stream_kernel_gap_us = 0;  // GPU gap between a kernel launched alone and its stream predecessor
  double graph_launch_us = 0;    // gap before a graph's first nodes: one launch of the graph
  double host_kernel_launch_us = 0;   // host time XLA takes to launch one kernel (a thunk)
  double host_library_call_us = 0;    // host time of one cuBLAS call (XLA's Gemm thunk)
  double host_graph_launch_us = 0;    // host time of one graph launch (a command buffer thunk)
  // Host time, per command, of recording a graph again before its launch
  // (XLA does so every execution of a command buffer with a dynamic-slice fusion).
  double host_graph_rerecord_us = 0;
  // The same for a cuBLAS call inside a dynamic-slice fusion, which XLA
  // traces into a graph of its own again, its operands moved.
  // Optional in device files: host_graph_rerecord_us.
  double host_graph_retrace_us = 0;
  // Host time, per cuBLAS command of a graph (outside a dynamic-slice
  // fusion), at every launch of the graph, on top of host_graph_launch_us.
  // Optional in device files: 0.
  double host_graph_blas_command_us = 0;
  // Host time of a dynamic-slice fusion launched alone (its offsets computed
  // on the host, then its kernel or copy launched).
  double host_dynamic_slice_us = 0;
  double host_sync_us = 0;            // host back after the main stream is done, at a sync
  // XLA's host takes another pace in each call (process): the host costs
  // above, scaled by these, give the fastest and slowest calls measured. A
  // trace-driven what-if onto another module, or with host costs from this
  // file, reports the step at both. Optional in device files: 1.
  double host_pace_fast_scale = 1;
  double host_pace_slow_scale = 1;
  double graph_node_gap_us = 0;  // between a node and its predecessor; negative: they overlap
  // The same after a kernel XLA launches with programmatic dependent launch
  // (its Triton GEMM fusions), whose tail the next node overlaps. Optional in
  // device files: graph_node_gap_us.
  double graph_node_gap_after_pdl_launch_us = 0;
  // A kernel node after a memcpy node of a graph XLA records again before
  // each launch (a scan's body with its dynamic-slice copies): the copy
  // engine hands over to the SMs, and the node costs this much beyond its
  // time launched alone (GraphProgram::after_copy). Optional; defaults to
  // graph_node_gap_us.
  double graph_node_gap_after_copy_us = 0;
  int graph_concurrency = 1;     // lanes a graph's independent nodes run on at once
  // A graph launched while the GPU waits for the host (cold): its nodes after
  // the first start no earlier than graph_cold_wait_per_node_us for each of
  // its nodes past graph_cold_wait_free_nodes, at most graph_cold_wait_max_us,
  // after its first node started. Optional in device files: 0 (no wait).
  double graph_cold_wait_per_node_us = 0;
  int graph_cold_wait_free_nodes = 0;
  double graph_cold_wait_max_us = 0;

  GemmEfficiencyTable gemm_efficiency;
  // Time each wave of CTA tiles adds beyond its FLOPs (filling the pipeline,
  // writing the output tile): on an H200 about 1.4 us, so GEMMs with short K
  // reach less of the peak. Optional in device files: 0.
  double gemm_wave_overhead_us = 0;

  // While a collective runs, compute kernels keep 1 - channels/SMs * factor of
  // the device's compute.
  double contention_factor = 1;
  // A collective's progress rate while compute kernels saturate the device.
  double comm_rate_under_compute = 1;
  // A collective's progress rate beside a GEMM confined to fewer SMs (which
  // leaves it SMs of its own but shares HBM and L2). Optional in device
  // files: 1. Each ring kind has its own (on 2 H200s all-gathers progressed
  // at 0.81-0.88 of their speed there, reduce-scatters and all-reduces at
  // 0.90-0.97); optional, comm_rate_beside_confined_gemm if absent, which
  // permutes use.
  double comm_rate_beside_confined_gemm = 1;
  double all_gather_rate_beside_confined_gemm = 1;
  double reduce_scatter_rate_beside_confined_gemm = 1;
  double all_reduce_rate_beside_confined_gemm = 1;
  // Throughput of the kernels that run while others wait for their SMs
  // (first come first served, sim/contention.h), relative to running alone.
  double concurrent_kernel_efficiency = 1;
  // Throughput per SM of a GEMM confined to fewer SMs (it leaves some to a
  // concurrent collective) relative to the same GEMM on every SM; above 1
  // when fewer busy SMs let the clocks rise. Optional in device files: 1.
  double sm_limited_gemm_scale = 1;
  // Data movement relative to what elementwise kernels reach (hbm_bandwidth_gbps
  // * hbm_efficiency), by how the cuda backend moves the bytes (copy_path in
  // cost_model.h): the copy engines (copies, slices, concatenations) and its
  // row-copy kernel (dynamic slices and updates; about 2.7 TB/s on an H200
  // against 4.2 for elementwise kernels). Optional in device files: 1.
  double copy_engine_bandwidth_scale = 1;
  double copy_kernel_bandwidth_scale = 1;
};

// The host's time to record a graph again before its launch: `commands`
// commands, `retraced` of them cuBLAS calls traced again.
double graph_rerecord_us(const DeviceModel& model, int64_t commands, int64_t retraced);

// The *_bandwidth_scale field of a ring collective; null for other opcodes.
const double* bandwidth_scale(const DeviceModel& model, hlo::Opcode op);
double* bandwidth_scale(DeviceModel& model, hlo::Opcode op);

// The *_rate_beside_confined_gemm field of a ring collective; null for other
// opcodes.
double* rate_beside_confined_gemm(DeviceModel& model, hlo::Opcode op);
// The rate a collective of kind `op` progresses at beside a confined GEMM.
double comm_rate_beside_confined_gemm(const DeviceModel& model, hlo::Opcode op);
// "all_gather_rate_beside_confined_gemm" for kAllGather: the device file key.
std::string rate_beside_confined_gemm_key(hlo::Opcode op);

// Parses a device file. `file_name` names it in errors.
Result<DeviceModel> parse_device_model(const std::string& json_text, const std::string& file_name);

// "h200" -> $STREAMLENS_ASSETS/devices/h200.json, <executable dir>/../share/streamlens/
// devices/h200.json (installed), <executable dir>/../assets/devices/h200.json, or
// SL_ASSETS_DIR/devices/h200.json (the source tree; the first that exists);
// anything containing '/' or ending in ".json" is a path.
Result<DeviceModel> load_device_model(const std::string& name_or_path);

// The paths load_device_model tries for a bare name, in order.
std::vector<std::string> device_model_candidates(const std::string& name);

// The stock device file ("h200", "h100", "a100") of the GPU a run names
// ("NVIDIA H100 80GB HBM3", as a capture records it, or "NVIDIA H200 x2");
// "" where no stock file describes it.
std::string stock_device_for_gpu(const std::string& gpu_name);

}  // namespace sl::sim
