#pragma once
// Hand-built device programs and a device model with round numbers, so
// timelines can be computed by hand: 1 flop/ns of tensor and vector peak,
// 1 byte/ns of HBM and NCCL bandwidth, no launch overheads or latencies,
// 100 SMs and GEMM tiles of 1x1 (a GEMM with m*n = 10 uses 10% of the SMs).

#include <cstdint>
#include <deque>
#include <vector>

#include "core/sched/thunk.h"
#include "core/trace/trace.h"
#include "sim/device_model.h"

namespace sl::sim::testing {

inline DeviceModel simple_model() {
  DeviceModel m;
  m.name = "simple";
  m.description = "test device";
  m.sm_count = 100;
  m.clock_mhz = 1000;
  m.peak_bf16_tflops = m.peak_f16_tflops = m.peak_tf32_tflops = m.peak_f32_tflops = 1e-3;  // 1 flop/ns
  m.hbm_bandwidth_gbps = 1;  // 1 byte/ns
  m.hbm_efficiency = 1;
  m.kernel_compute_efficiency = 1;
  m.nvlink_bandwidth_per_link_gbps = 1;
  m.nvlink_links = 1;
  m.nccl_bus_bandwidth_gbps = 1;
  m.p2p_bandwidth_gbps = 1;
  m.nccl_channels = 10;
  m.nccl_protocols = {NcclProtocol{"Simple", 0, 0, 1, 1}};
  m.kernel_launch_us = 0;
  m.nccl_launch_us = 0;
  m.gemm_efficiency.tile_m = 1;
  m.gemm_efficiency.tile_n = 1;
  m.contention_factor = 1;
  m.comm_rate_under_compute = 1;
  m.concurrent_kernel_efficiency = 1;
  return m;
}

// A GEMM that uses 10% of the SMs and takes `ns` alone (ns multiple of 10).
inline sched::Thunk small_gemm(int stream, int64_t ns, const char* name = "small") {
  sched::Thunk t;
  t.kind = sched::ThunkKind::kGemm;
  t.stream = stream;
  t.attributed_name = name;
  t.gemm = {10, 1, 1, 1, hlo::PrimitiveType::kBF16};
  t.flops = ns / 10;  // 10 of 100 SMs: 0.1 flop/ns
  return t;
}

// A GEMM that fills every SM and takes `ns` alone.
inline sched::Thunk big_gemm(int stream, int64_t ns, const char* name = "big") {
  sched::Thunk t;
  t.kind = sched::ThunkKind::kGemm;
  t.stream = stream;
  t.attributed_name = name;
  t.gemm = {100, 1, 1, 1, hlo::PrimitiveType::kBF16};
  t.flops = ns;
  return t;
}

// A memory-bound kernel moving `bytes` (takes `bytes` ns alone).
inline sched::Thunk mem_kernel(int stream, int64_t bytes, const char* name = "copy") {
  sched::Thunk t;
  t.kind = sched::ThunkKind::kKernel;
  t.stream = stream;
  t.attributed_name = name;
  t.bytes_accessed = bytes;
  return t;
}

inline sched::Thunk record(int stream, int event) {
  sched::Thunk t;
  t.kind = sched::ThunkKind::kRecordEvent;
  t.stream = stream;
  t.event = event;
  return t;
}

inline sched::Thunk wait(int stream, int event) {
  sched::Thunk t;
  t.kind = sched::ThunkKind::kWaitEvent;
  t.stream = stream;
  t.event = event;
  return t;
}

// Thunks hold their device group as a view; hand-built groups live as long
// as the test binary.
inline std::span<const int64_t> kept_group(std::vector<int64_t> group) {
  static std::deque<std::vector<int64_t>> groups;
  return groups.emplace_back(std::move(group));
}

inline sched::Thunk collective(int stream, hlo::Opcode op, std::vector<int64_t> group, int64_t rank,
                               int64_t bytes_in, int64_t bytes_out, int64_t rendezvous_id,
                               const char* name = "coll") {
  sched::Thunk t;
  t.kind = sched::ThunkKind::kCollective;
  t.stream = stream;
  t.attributed_name = name;
  t.collective.op = op;
  t.collective.group = kept_group(std::move(group));
  t.collective.rank_in_group = rank;
  t.collective.bytes_in = bytes_in;
  t.collective.bytes_out = bytes_out;
  t.collective.rendezvous_id = rendezvous_id;
  t.bytes_accessed = bytes_in + bytes_out;
  return t;
}

inline sched::DeviceProgram device(int64_t id, std::vector<sched::Thunk> thunks, int num_events = 0) {
  sched::DeviceProgram p;
  p.device = id;
  p.replica = id;
  p.thunks = std::move(thunks);
  p.num_events = num_events;
  return p;
}

// The events of one instruction name (kind != wait), in trace order.
inline std::vector<const trace::Event*> find_events(const trace::Trace& t, const std::string& instruction,
                                                    bool waits = false) {
  std::vector<const trace::Event*> out;
  for (const trace::Event& e : t.events) {
    if (t.instruction_of(e) == instruction && (e.kind == trace::EventKind::kWait) == waits) out.push_back(&e);
  }
  return out;
}

inline const trace::Event& only_event(const trace::Trace& t, const std::string& instruction, int64_t device = 0) {
  for (const trace::Event& e : t.events) {
    if (t.instruction_of(e) == instruction && e.device == device && e.kind != trace::EventKind::kWait) return e;
  }
  static trace::Event missing{};
  missing.start_ns = missing.end_ns = -1;
  return missing;
}

}  // namespace sl::sim::testing
