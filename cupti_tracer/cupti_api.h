#pragma once
// The only code that calls CUPTI (STYLE item 6). Everything it receives is
// decoded into records.h views and handed to an ActivitySink.
//
// CUPTI's buffer callbacks carry no user pointer, so there is exactly one
// installed sink per process; start() installs it and stop() flushes and
// removes it. Callers pass their sink explicitly; nothing else is global.

#include <cstdint>
#include <string>

#include "core/common/status.h"
#include "cupti_tracer/activity_sink.h"

namespace sl::cupti {

// External correlation ids pushed by CuptiApi use this kind (CUSTOM0).
constexpr uint32_t kExternalKindStreamlens = 3;

class CuptiApi {
 public:
  // Enables CONCURRENT_KERNEL, MEMCPY, MEMSET, SYNCHRONIZATION, CUDA_EVENT,
  // EXTERNAL_CORRELATION and OVERHEAD records and registers 8 MiB buffers.
  // kRuntime naming the CUPTI call on failure. A second start() without stop()
  // just replaces the sink.
  static Status start(ActivitySink* sink);
  // cuptiActivityFlushAll(forced): completed buffers are delivered to the sink
  // on this thread before it returns. Never call this while holding a lock the
  // sink takes (the sink runs inside this call).
  static Status flush();
  // Hands over the buffers CUPTI has completed so far (not the one being
  // filled); cheap, for the end of every iteration of a long run.
  static Status flush_completed();
  // Flush, disable the kinds, remove the sink.
  static Status stop();
  // CUPTI's API records (runtime and driver) on or off. Only they make CUPTI
  // emit external correlations; off, a launch costs its thread about 1 us
  // less (H200: 3.5 -> 4.2 us per tiny kernel instead of 5.2) and the
  // collector attributes its records by stream order (LaunchInfo::tagged).
  static Status set_api_records(bool on);

  // CUPTI's GPU time base (ns), comparable with record timestamps.
  static Result<uint64_t> timestamp();
  // Calls `on_range(true, ts)` when the process calls cudaProfilerStart /
  // cuProfilerStart (after it returns) and `on_range(false, ts)` when it calls
  // the Stop (before it runs), ts in the records' time base: what
  // `capture --capture-range cudaProfilerApi` keeps. Subscribes to CUPTI's
  // driver-API callbacks, so at most one watcher per process.
  static Status watch_profiler_api(void (*on_range)(bool on, uint64_t timestamp));
  // The same for NVTX ranges named `name` (nvtx_range.h): `capture
  // --capture-range nvtx:NAME`. CUPTI sees NVTX calls only when the program's
  // NVTX loads an injection (NVTX_INJECTION64_PATH: libstreamlens_inject.so
  // hands it on to CUPTI's).
  static Status watch_nvtx_range(const std::string& name, void (*on_range)(bool on, uint64_t timestamp));
  // CUPTI stream id of a CUDA stream handle (cudaStream_t / CUstream).
  static Result<uint32_t> stream_id(void* cuda_stream);
  // CUPTI's ids of a CUDA graph (cudaGraph_t) and of an executable graph
  // (cudaGraphExec_t), as records of their launches carry them (graphId).
  static Result<uint32_t> graph_id(void* cuda_graph);
  static Result<uint32_t> graph_exec_id(void* cuda_graph_exec);
  // Tag every CUDA launch of the calling thread until pop with `id`
  // (per-thread stack inside CUPTI).
  static Status push_external_id(uint64_t id);
  static Status pop_external_id();
};

// SL_CUPTI_TAG_ALL=1: keep API records on and tag every launch (the old
// way, for comparison), instead of tagging only the first launches.
bool tag_all_launches();

// RAII push/pop of an external correlation id; errors are reported by the
// explicit calls, the guard only keeps push and pop paired.
class ExternalIdScope {
 public:
  explicit ExternalIdScope(uint64_t id, bool enabled = true);
  ~ExternalIdScope();
  ExternalIdScope(const ExternalIdScope&) = delete;
  ExternalIdScope& operator=(const ExternalIdScope&) = delete;
  const Status& status() const { return status_; }

 private:
  bool pushed_ = false;
  Status status_;
};

}  // namespace sl::cupti
