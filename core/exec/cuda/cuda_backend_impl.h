#pragma once
// The CUDA backend's class, shared by the files that implement it, one
// concept each: device setup and teardown (cuda_device_setup.cc), issuing one
// iteration's thunks (cuda_issue.cc), the iteration loop
// (cuda_iterations.cc), the watchdogs that stop NCCL when a peer dies or
// hangs (cuda_watchdogs.cc), fault injection for tests
// (cuda_fault_injection.cc), reading results back (cuda_results.cc), and
// run() tying them together (cuda_backend.cc). Private to core/exec/cuda.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/dist/peer_watch.h"
#include "core/dist/rendezvous.h"
#include "core/exec/backend.h"
#include "core/exec/cuda/background_flush.h"
#include "core/exec/cuda/cuda_backend.h"
#include "core/exec/cuda/device_context.h"
#include "core/exec/cuda/generated_fusions.h"
#include "core/exec/cuda/nccl_comms.h"
#include "core/exec/stall_watch.h"
#include "cupti_tracer/collector.h"

namespace sl::exec::cuda {

// Iterations of a few milliseconds need no flush of their own (see
// background_flush.h); long ones (training steps) get one each.
constexpr std::chrono::milliseconds kMinFlushInterval{200};

constexpr size_t kFallbackWorkspaceBytes = size_t{32} << 20;

// A traced run with CUDA graphs first launches this many warm-up iterations
// on streams, tagged: the last shows the collector what each graph node
// leaves (the first may hold a library's one-time work).
constexpr int kTeachingIterations = 2;

// Iteration-done events per device, reused in turn (DeviceContext::
// iteration_done). The host stays fewer iterations than this ahead of the
// GPU (CUDA's launch queue holds about a thousand launches, and an iteration
// takes two at least), so an event is not recorded again before it
// completes; if it were, the watch would only see that progress later.
constexpr int kIterationDoneEvents = 1024;

// Frees a device's CUDA graphs.
void destroy_graphs(DeviceContext& ctx);

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(CudaOptions options)
      : options_(options),
        fail_at_(injected_fault("SL_CUDA_FAIL_THUNK")),
        hang_at_(injected_fault("SL_CUDA_HANG_THUNK")) {}
  std::string name() const override { return "cuda"; }
  Result<RunOutput> run(const sched::LoweredProgram& program, const RunOptions& options) override;

 private:
  Status setup(const sched::LoweredProgram& program, const RunOptions& options);
  Status setup_device(const sched::LoweredProgram& program, const RunOptions& options, int64_t device,
                      DeviceContext& ctx);
  Status setup_collectives(const sched::LoweredProgram& program, const RunOptions& options,
                           const std::vector<int64_t>& local);
  // Generated fusion kernels, shared by every local device (generated_fusions.h).
  Status setup_fusions(const sched::LoweredProgram& program);
  Status init_memory(const sched::LoweredProgram& program, const RunOptions& options);
  // `graphs`: launch the device's CUDA graphs (DeviceContext::graphs) in
  // place of their nodes; false issues every thunk on its stream.
  Status issue(DeviceContext& ctx, int iteration, bool keep, bool tagged, bool graphs,
               cupti::ActivityCollector* collector);
  // Captures RunOptions::command_buffers into CUDA graphs on every local
  // device (cuda_graphs.cc), after memory and fusions are set up.
  Status setup_graphs(const RunOptions& options, cupti::ActivityCollector* collector);
  // One launch of `graph` on its stream, joined with its other streams.
  Status launch_graph(const DeviceGraph& graph, DeviceContext& ctx, const std::string& at) const;
  // The graphs' counters and the refused ones' notes.
  void add_graph_results(RunOutput* out) const;
  // What one device's thread issues: warm-up then recorded iterations. The
  // first `tagged` push external ids (CUPTI's API records are on); after
  // them `tagging_done` runs once (the last device turns API records off).
  struct IterationPlan {
    int warmup = 0;
    int recorded = 1;
    int tagged = 1;
    std::function<void()> tagging_done;
    std::atomic<int>* issued = nullptr;  // iterations whose iteration_done event is recorded
  };
  Status run_iterations(DeviceContext& ctx, const IterationPlan& plan, cupti::ActivityCollector* collector,
                        BackgroundFlush* flush, const std::function<void(int64_t, int64_t)>& progress);
  // Warm-up iterations run: traced with graphs, at least
  // kTeachingIterations.
  int effective_warmup(const RunOptions& options) const;
  // Every local device's thread running its iterations; the first failure's status.
  Status run_devices(const RunOptions& options, cupti::ActivityCollector* collector, BackgroundFlush* flush,
                     std::vector<std::atomic<int>>& issued);
  void teardown();

  // Program devices this process runs: all of them, or its rank's one.
  std::vector<int64_t> local_devices(const sched::LoweredProgram& program) const;
  // Multi-process: all ranks meet, rank 0 reads the tracer clock, and every
  // rank counts its trace from that instant.
  Status agree_on_time_origin(cupti::ActivityCollector* collector);

  // SL_CUDA_FAIL_THUNK=DEVICE:INDEX: issuing thunk INDEX of program device
  // DEVICE fails, as a CUDA error there would. SL_CUDA_HANG_THUNK=DEVICE:INDEX:
  // that device's thread stops there instead, as a hung rank would, until
  // NCCL is stopped. For reproducing what a failure or a hang on one device
  // does to the run (GPU tests *PeerWaiting*, *Hung*); unset in normal use.
  struct InjectedFault {
    int64_t device = -1;
    size_t thunk = 0;
  };
  static std::optional<InjectedFault> injected_fault(const char* variable);
  // The injected failure or hang at thunk `index` of this device, if one is set there.
  Status check_injected_fault(const sched::Thunk& thunk, size_t index, const DeviceContext& ctx) const;

  // The watchdogs of one run: a peer rank's process ending (PeerWatch), or
  // no device making progress for --nccl-timeout (StallWatch), stops NCCL.
  struct Watchdogs {
    std::optional<dist::PeerWatch> peers;
    std::optional<StallWatch> stall;
  };
  void start_watchdogs(const RunOptions& options, std::span<const std::atomic<int>> issued,
                       std::vector<int>& finished, Watchdogs* out);
  // Polls the run's progress (iterations issued and finished on every device)
  // for the stall watch; only the watch's thread calls it.
  int64_t progress(std::span<const std::atomic<int>> issued, std::vector<int>& finished) const;

  // The ROOT's values on every local device, copied back and decoded.
  Result<std::vector<DeviceResults>> read_results(const sched::LoweredProgram& program);
  std::string device_description() const;

  struct GraphStats {
    bool requested = false;  // the run was given command buffers
    int64_t graphs = 0, nodes = 0, fallbacks = 0;
    std::vector<std::string> notes;
  };
  GraphStats graph_stats_;
  CudaOptions options_;
  std::optional<InjectedFault> fail_at_;
  std::optional<InjectedFault> hang_at_;
  std::vector<DeviceContext> devices_;
  std::unique_ptr<NcclComms> comms_;
  std::unique_ptr<GeneratedFusions> fusions_;
  std::unique_ptr<dist::Rendezvous> rendezvous_;
};

}  // namespace sl::exec::cuda
