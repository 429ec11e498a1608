#include "cupti_tracer/cupti_api.h"

#include <cupti.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "cupti_tracer/nvtx_range.h"

namespace sl::cupti {

namespace {

constexpr size_t kBufferBytes = 8u << 20;  // 8 MiB per CUPTI buffer
constexpr size_t kBufferAlign = 8;         // CUPTI requires 8-byte aligned buffers

// The one installed sink (see the header). Atomic because the completed
// callback reads it on CUPTI's worker thread while start/stop write it.
std::atomic<ActivitySink*> g_sink{nullptr};
std::mutex g_setup_mutex;  // serializes start/stop; never held inside callbacks
bool g_callbacks_registered = false;

// SL_CUPTI_DEBUG=1: count every record by activity kind and print the counts
// at each flush, to tell "CUPTI sent nothing" from "the collector dropped it".
constexpr size_t kMaxKind = 64;
std::atomic<uint64_t> g_kind_counts[kMaxKind];
bool debug_enabled() {
  static const bool on = std::getenv("SL_CUPTI_DEBUG") != nullptr;
  return on;
}
void print_kind_counts() {
  std::fprintf(stderr, "streamlens cupti debug: records by kind:");
  for (size_t k = 0; k < kMaxKind; ++k) {
    if (uint64_t n = g_kind_counts[k].load()) std::fprintf(stderr, " %zu:%llu", k, static_cast<unsigned long long>(n));
  }
  std::fprintf(stderr, "\n");
}

std::string cupti_error(const char* call, CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown CUPTI error";
  return std::string(call) + " failed: " + text + " (" + std::to_string(static_cast<int>(result)) + ")";
}

#define SL_CUPTI_CALL(call)                                        \
  do {                                                             \
    CUptiResult _r = (call);                                       \
    if (_r != CUPTI_SUCCESS) return runtime_error(cupti_error(#call, _r)); \
  } while (0)

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

// Runs on CUPTI's worker thread, or re-entrantly on a thread that is inside
// cuptiActivityFlushAll. It touches only the sink (which locks itself).
void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t /*size*/,
                               size_t valid_size) {
  ActivitySink* sink = g_sink.load(std::memory_order_acquire);
  if (sink != nullptr && valid_size > 0) {
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
      if (debug_enabled()) g_kind_counts[std::min<size_t>(record->kind, kMaxKind - 1)]++;
      // API records are enabled only so CUPTI emits external correlations.
      if (record->kind == CUPTI_ACTIVITY_KIND_RUNTIME || record->kind == CUPTI_ACTIVITY_KIND_DRIVER) continue;
      if (auto activity = decode_activity(record)) {
        sink->on_activity(*activity);
      } else {
        sink->on_unknown_kind(static_cast<uint32_t>(record->kind));
      }
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS && dropped > 0) {
      sink->on_dropped(dropped);
    }
  }
  std::free(buffer);
}

// CUPTI creates an EXTERNAL_CORRELATION record for a CUDA API activity
// record, so the runtime and driver API kinds must be on for kernels to be
// attributed to instructions (the first H200 run, without them, attributed
// no kernel at all). Pairing ids in API-enter callbacks instead (a
// thread-local id, both API domains subscribed) was measured on an H200 and
// cost more: 102% against 66% on 10,000 tiny kernels (bench/RESULTS.md).
constexpr CUpti_ActivityKind kRequiredKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
constexpr CUpti_ActivityKind kApiKinds[] = {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

// The driver calls that put work on the GPU (NCCL launches its kernels
// through the driver API, the runtime does not go through these).
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async};

// Which API records to ask for (each costs time on the launching thread):
// SL_CUPTI_API = both (default) | runtime | runtime+driver-launches. A
// diagnostic for measuring that cost (gpu_bench tracer, which also counts
// attributed kernels). Driver records only, or per-call runtime records,
// attributed no kernel on an H200 (CUDA 13.0).
Status enable_api_records(bool enable) {
  const char* env = std::getenv("SL_CUPTI_API");
  const std::string mode = env ? env : "both";
  if (mode == "runtime+driver-launches") {
    for (CUpti_CallbackId id : kDriverLaunches) SL_CUPTI_CALL(cuptiActivityEnableDriverApi(id, enable));
  }
  for (CUpti_ActivityKind kind : kApiKinds) {
    const bool wanted = kind == CUPTI_ACTIVITY_KIND_RUNTIME || mode == "both";
    if (!wanted) continue;
    if (enable) {
      SL_CUPTI_CALL(cuptiActivityEnable(kind));
    } else {
      (void)cuptiActivityDisable(kind);
    }
  }
  return ok_status();
}
// Useful but not needed for kernel timelines: failure to enable is tolerated.
constexpr CUpti_ActivityKind kOptionalKinds[] = {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_CUDA_EVENT,
                                                 CUPTI_ACTIVITY_KIND_OVERHEAD};

// Which record kinds to ask for: SL_CUPTI_KINDS = all (default) | required
// (no optional kinds) | kernels (kernels and external correlations only, no
// copies). A diagnostic for measuring what each costs (gpu_bench tracer).
enum class KindSet { kAll, kRequired, kKernels };
KindSet kind_set() {
  const char* env = std::getenv("SL_CUPTI_KINDS");
  const std::string v = env ? env : "all";
  return v == "kernels" ? KindSet::kKernels : v == "required" ? KindSet::kRequired : KindSet::kAll;
}
bool wanted(CUpti_ActivityKind kind) {
  const KindSet set = kind_set();
  if (kind == CUPTI_ACTIVITY_KIND_MEMCPY || kind == CUPTI_ACTIVITY_KIND_MEMSET) return set != KindSet::kKernels;
  for (CUpti_ActivityKind optional : kOptionalKinds) {
    if (kind == optional) return set == KindSet::kAll;
  }
  return true;
}

}  // namespace

Status CuptiApi::start(ActivitySink* sink) {
  std::lock_guard<std::mutex> lock(g_setup_mutex);
  if (!g_callbacks_registered) {
    SL_CUPTI_CALL(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    g_callbacks_registered = true;
  }
  g_sink.store(sink, std::memory_order_release);
  for (CUpti_ActivityKind kind : kRequiredKinds) {
    if (wanted(kind)) SL_CUPTI_CALL(cuptiActivityEnable(kind));
  }
  SL_RETURN_IF_ERROR(enable_api_records(true));
  for (CUpti_ActivityKind kind : kOptionalKinds) {
    if (wanted(kind)) (void)cuptiActivityEnable(kind);
  }
  return ok_status();
}

Status CuptiApi::flush() {
  SL_CUPTI_CALL(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  if (debug_enabled()) print_kind_counts();
  return ok_status();
}

Status CuptiApi::flush_completed() {
  SL_CUPTI_CALL(cuptiActivityFlushAll(0));
  return ok_status();
}

Status CuptiApi::stop() {
  // Flush before taking the setup lock: the sink runs inside the flush.
  Status flushed = flush();
  std::lock_guard<std::mutex> lock(g_setup_mutex);
  for (CUpti_ActivityKind kind : kRequiredKinds) (void)cuptiActivityDisable(kind);
  (void)enable_api_records(false);
  for (CUpti_ActivityKind kind : kOptionalKinds) (void)cuptiActivityDisable(kind);
  g_sink.store(nullptr, std::memory_order_release);
  return flushed;
}

Status CuptiApi::set_api_records(bool on) {
  std::lock_guard<std::mutex> lock(g_setup_mutex);
  // External correlations come with API records only; off, CUPTI need not
  // look at the correlation stack on every call either.
  if (on) {
    SL_CUPTI_CALL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
  } else {
    (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  }
  return enable_api_records(on);
}

Result<uint64_t> CuptiApi::timestamp() {
  uint64_t ts = 0;
  CUptiResult r = cuptiGetTimestamp(&ts);
  if (r != CUPTI_SUCCESS) return runtime_error(cupti_error("cuptiGetTimestamp", r));
  return ts;
}

namespace {

void (*g_on_profiler_range)(bool, uint64_t) = nullptr;
CUpti_SubscriberHandle g_profiler_subscriber = nullptr;
NvtxRangeTracker* g_nvtx_range = nullptr;  // lives until exit: NVTX calls come until then

void CUPTIAPI profiler_api_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  if (g_on_profiler_range == nullptr) return;
  if (domain == CUPTI_CB_DOMAIN_NVTX && g_nvtx_range != nullptr) {
    const auto* nvtx = static_cast<const CUpti_NvtxData*>(data);
    const auto change = g_nvtx_range->on_call(id, nvtx->functionParams, nvtx->functionReturnValue,
                                              static_cast<uint64_t>(pthread_self()));
    uint64_t ts = 0;
    if (change != NvtxRangeTracker::Change::kNone && cuptiGetTimestamp(&ts) == CUPTI_SUCCESS) {
      g_on_profiler_range(change == NvtxRangeTracker::Change::kOpened, ts);
    }
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  uint64_t ts = 0;
  if (id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart && info->callbackSite == CUPTI_API_EXIT) {
    if (cuptiGetTimestamp(&ts) == CUPTI_SUCCESS) g_on_profiler_range(true, ts);
  } else if (id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop && info->callbackSite == CUPTI_API_ENTER) {
    if (cuptiGetTimestamp(&ts) == CUPTI_SUCCESS) g_on_profiler_range(false, ts);
  }
}

}  // namespace

Status CuptiApi::watch_profiler_api(void (*on_range)(bool on, uint64_t timestamp)) {
  std::lock_guard<std::mutex> lock(g_setup_mutex);
  g_on_profiler_range = on_range;
  if (g_profiler_subscriber == nullptr) {
    SL_CUPTI_CALL(cuptiSubscribe(&g_profiler_subscriber, profiler_api_callback, nullptr));
  }
  // cudaProfilerStart calls cuProfilerStart: the driver's ids see both.
  SL_CUPTI_CALL(cuptiEnableCallback(1, g_profiler_subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                    CUPTI_DRIVER_TRACE_CBID_cuProfilerStart));
  SL_CUPTI_CALL(cuptiEnableCallback(1, g_profiler_subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                                    CUPTI_DRIVER_TRACE_CBID_cuProfilerStop));
  return ok_status();
}

Status CuptiApi::watch_nvtx_range(const std::string& name, void (*on_range)(bool on, uint64_t timestamp)) {
  std::lock_guard<std::mutex> lock(g_setup_mutex);
  g_on_profiler_range = on_range;
  if (g_nvtx_range == nullptr) g_nvtx_range = new NvtxRangeTracker(name);
  if (g_profiler_subscriber == nullptr) {
    SL_CUPTI_CALL(cuptiSubscribe(&g_profiler_subscriber, profiler_api_callback, nullptr));
  }
  SL_CUPTI_CALL(cuptiEnableDomain(1, g_profiler_subscriber, CUPTI_CB_DOMAIN_NVTX));
  return ok_status();
}

Result<uint32_t> CuptiApi::stream_id(void* cuda_stream) {
  uint32_t id = 0;
  CUptiResult r = cuptiGetStreamIdEx(nullptr, static_cast<CUstream>(cuda_stream), 0, &id);
  if (r != CUPTI_SUCCESS) return runtime_error(cupti_error("cuptiGetStreamIdEx", r));
  return id;
}

Result<uint32_t> CuptiApi::graph_id(void* cuda_graph) {
  uint32_t id = 0;
  CUptiResult r = cuptiGetGraphId(static_cast<CUgraph>(cuda_graph), &id);
  if (r != CUPTI_SUCCESS) return runtime_error(cupti_error("cuptiGetGraphId", r));
  return id;
}

Result<uint32_t> CuptiApi::graph_exec_id(void* cuda_graph_exec) {
  uint32_t id = 0;
  CUptiResult r = cuptiGetGraphExecId(static_cast<CUgraphExec>(cuda_graph_exec), &id);
  if (r != CUPTI_SUCCESS) return runtime_error(cupti_error("cuptiGetGraphExecId", r));
  return id;
}

Status CuptiApi::push_external_id(uint64_t id) {
  SL_CUPTI_CALL(cuptiActivityPushExternalCorrelationId(
      static_cast<CUpti_ExternalCorrelationKind>(kExternalKindStreamlens), id));
  return ok_status();
}

Status CuptiApi::pop_external_id() {
  uint64_t last = 0;
  SL_CUPTI_CALL(cuptiActivityPopExternalCorrelationId(
      static_cast<CUpti_ExternalCorrelationKind>(kExternalKindStreamlens), &last));
  return ok_status();
}

bool tag_all_launches() {
  const char* env = std::getenv("SL_CUPTI_TAG_ALL");
  return env != nullptr && std::string(env) == "1";
}

ExternalIdScope::ExternalIdScope(uint64_t id, bool enabled) {
  if (!enabled) return;
  status_ = CuptiApi::push_external_id(id);
  pushed_ = status_.is_ok();
}

ExternalIdScope::~ExternalIdScope() {
  if (pushed_) (void)CuptiApi::pop_external_id();
}

}  // namespace sl::cupti
