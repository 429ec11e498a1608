#pragma once
// The discrete-event simulator (docs/simulator.md). Every stream of every
// device is a FIFO of thunks. A thunk starts when its stream is free and its
// waits are satisfied; a kWaitEvent waits for the record of its event that
// was issued before it in program order (CUDA's cudaStreamWaitEvent; a wait
// on an event never recorded before it is a no-op). A collective starts when
// every member of its group has reached it (rendezvous on rendezvous_id and
// group) and ends on all members together; an early member's stream shows a
// `wait` event from its arrival until the start.
//
// Running work progresses at rates set by the contention model
// (sim/contention.h), re-evaluated whenever the set of running work on a
// device changes, so overlapping kernels slow each other for exactly as long
// as they overlap. A kernel's launch is a gap before its event, and its event
// starts when it first gets SMs (a kernel behind one that fills the device
// waits), as CUPTI shows kernels. Ties are broken by a sequence number, so a
// run is deterministic.
//
// A collective's kernel needs SMs too: a GEMM on every SM with a tile for
// each (cuBLAS's persistent kernels) that got them before it, on any member,
// holds it until that GEMM ends. Launched first means earlier in its
// device's thunk order, or already running when the collective arrived. Its
// streams show a `wait for SMs held by a GEMM` event (no instruction: not
// part of the launch), and the trace counts such collectives
// (kCollectivesHeldCounter, kHeldNsCounter). On an H200 the permute of
// samples/permute_behind_gemm.hlo got SMs in the GEMM's last wave, about
// 80 us before its end, and took 520-570 us; simulated from the GEMM's end,
// the makespan was within 3.2% of the measured one in seven measurements.
//
// Each thunk costs O(log n) plus O(work running on its device).
//
// Dependency edges: one per wait on an event recorded on another stream of
// the same device (from the last event on the recording stream before the
// record, to the next event on the waiting stream), whether or not the wait
// delayed anything; and, for a rendezvous with a late member, one from the
// late member's last event before the collective to each early member's
// collective event; for a collective a GEMM held, one from the kernel that
// last ended on each device it waited on (the GEMM) to each member's
// collective event.

#include <cstdint>
#include <functional>
#include <vector>

#include "core/common/status.h"
#include "core/sched/thunk.h"
#include "core/trace/trace.h"
#include "sim/device_model.h"

namespace sl::sim {

// Trace counters of collectives that waited for a GEMM holding every SM.
inline constexpr const char* kCollectivesHeldCounter = "sim.collectives_behind_gemm";
inline constexpr const char* kHeldNsCounter = "sim.collective_ns_behind_gemm";
// Trace counter of opaque custom-calls the cost model could only cost by bytes.
inline constexpr const char* kCustomCallsByBytesCounter = "sim.custom_calls_by_bytes";

// SimOptions::fixed_thunk_gap_ns: no gap given (the model's launch gap).
inline constexpr int64_t kNoGap = INT64_MIN;

// Trace counters of the host-issue model (HostIssue).
inline constexpr const char* kHostBoundCounter = "sim.host_bound_kernels";
inline constexpr const char* kHostWaitNsCounter = "sim.host_wait_ns";
inline constexpr const char* kHostSyncsCounter = "sim.host_syncs";
inline constexpr const char* kColdGraphWaitNsCounter = "sim.cold_graph_wait_ns";

// XLA's host thread (docs/simulator.md, "Host issue"): one per device, it
// issues the device's thunks in program order, each costing `cost_ns` of
// host time, and never waits for the GPU except where `sync_before` says so
// (a while loop without a known trip count copies its predicate to the host
// and blocks every trip): there it first waits until the main stream has
// done everything issued before, then `sync_ns` more. A kernel starts at the
// latest of its issue, its stream's predecessor plus its launch gap, and its
// waits; so launches hide behind kernels longer than them and show only
// where kernels are shorter. A collective advances the host clock but is not
// held back by it.
struct HostIssue {
  std::vector<std::vector<int64_t>> cost_ns;      // per device (program order), per thunk
  std::vector<std::vector<uint8_t>> sync_before;  // per device, per thunk; missing = none
  // Per device, per thunk with a sync: the host time it spends issuing the
  // loop condition's launches and the predicate copy before the sync; missing = 0.
  std::vector<std::vector<int64_t>> before_sync_ns;
  int64_t sync_ns = 0;
};

// A CUDA graph launched while the GPU waits for the host (a cold launch;
// docs/simulator.md, "Command buffers"): its nodes after the first start no
// earlier than `wait_ns` of their launch after the first node started.
struct ColdGraphWait {
  // Per device, per thunk: its graph launch (GraphProgram::graph_of), -1 for
  // none; `holds` says whether the wait holds the node back (its gap is the
  // model's: a measured gap already shows its wait).
  std::vector<std::vector<int64_t>> graph_of;
  std::vector<std::vector<uint8_t>> holds;
  std::vector<int64_t> wait_ns;  // per graph launch
};

struct SimOptions {
  bool allow_tf32 = false;  // f32 GEMMs at the TF32 tensor core rate
  int comm_sms = 0;         // exec::RunOptions::comm_sms: SMs GEMMs beside a collective leave free
  // The lowered module, whose computations fusions call: kernels are costed
  // by their content (sim/kernel_content.h). Null: fusions cost by their
  // thunk's bytes. Must outlive simulate().
  const hlo::Module* module = nullptr;
  // Trace-driven runs (sim/trace_driven.h): per device (in the order of the
  // programs), per thunk, a duration in ns that replaces the model's cost of
  // a kernel or collective (the launch gap still comes before it); 0 or
  // missing: the model's cost. Must outlive simulate().
  const std::vector<std::vector<int64_t>>* fixed_thunk_ns = nullptr;
  // The launch gap before each kernel, with or without a fixed duration
  // (trace-driven runs, command buffers); kNoGap or missing: kernel_launch_us.
  // A negative gap (graph nodes) overlaps the predecessor's tail: it is taken
  // off the kernel's duration, at most half of it.
  const std::vector<std::vector<int64_t>>* fixed_thunk_gap_ns = nullptr;
  // The host-issue model; null: every thunk is issued before the GPU needs
  // it (the launch gap alone). Must outlive simulate().
  const HostIssue* host_issue = nullptr;
  // The wait after a cold graph launch's first node; null: none. Must outlive simulate().
  const ColdGraphWait* cold_graph_wait = nullptr;
  // Called now and then with thunks done / total; may be empty.
  std::function<void(int64_t done, int64_t total)> progress;
};

// Simulates the devices together. Errors: malformed thunks (bad event ids,
// collectives naming devices that are not simulated) and deadlocks (a stream
// waiting for an event that is never recorded, a rendezvous a member never
// reaches), each naming the device, stream and thunk.
Result<trace::Trace> simulate(const std::vector<sched::DeviceProgram>& devices, const DeviceModel& model,
                              const SimOptions& options = {});

}  // namespace sl::sim
