#include "cupti_tracer/records.h"

#include <cupti_activity.h>

namespace sl::cupti {

namespace {

KernelActivity decode_kernel(const CUpti_ActivityKernel10& r) {
  KernelActivity k;
  k.device = r.deviceId;
  k.context = r.contextId;
  k.stream = r.streamId;
  k.correlation = r.correlationId;
  k.start_ns = r.start;
  k.end_ns = r.end;
  k.name = r.name ? r.name : "";
  k.grid[0] = r.gridX; k.grid[1] = r.gridY; k.grid[2] = r.gridZ;
  k.block[0] = r.blockX; k.block[1] = r.blockY; k.block[2] = r.blockZ;
  k.graph_id = r.graphId;
  return k;
}

}  // namespace

std::optional<Activity> decode_activity(const void* raw) {
  if (raw == nullptr) return std::nullopt;
  const auto* record = static_cast<const CUpti_Activity*>(raw);
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return decode_kernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(record));
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& r = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      MemcpyActivity m;
      m.device = r.deviceId; m.context = r.contextId; m.stream = r.streamId; m.correlation = r.correlationId;
      m.start_ns = r.start; m.end_ns = r.end; m.bytes = r.bytes; m.copy_kind = r.copyKind;
      m.graph_id = r.graphId;
      return m;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& r = *reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      MemsetActivity m;
      m.device = r.deviceId; m.context = r.contextId; m.stream = r.streamId; m.correlation = r.correlationId;
      m.start_ns = r.start; m.end_ns = r.end; m.bytes = r.bytes; m.value = r.value;
      m.graph_id = r.graphId;
      return m;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& r = *reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      SyncActivity s;
      s.context = r.contextId; s.stream = r.streamId; s.correlation = r.correlationId;
      s.type = static_cast<uint32_t>(r.type); s.start_ns = r.start; s.end_ns = r.end;
      return s;
    }
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
      const auto& r = *reinterpret_cast<const CUpti_ActivityCudaEvent2*>(record);
      CudaEventActivity e;
      e.device = r.deviceId; e.context = r.contextId; e.stream = r.streamId; e.correlation = r.correlationId;
      e.event = r.eventId; e.device_timestamp_ns = r.deviceTimestamp;
      return e;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto& r = *reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      ExternalCorrelationActivity x;
      x.external_kind = static_cast<uint32_t>(r.externalKind);
      x.external_id = r.externalId;
      x.correlation = r.correlationId;
      return x;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto& r = *reinterpret_cast<const CUpti_ActivityOverhead3*>(record);
      OverheadActivity o;
      o.overhead_kind = static_cast<uint32_t>(r.overheadKind);
      o.start_ns = r.start; o.end_ns = r.end;
      return o;
    }
    default:
      return std::nullopt;
  }
}

const char* memcpy_kind_name(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy PtoP";
    default: return "memcpy";
  }
}

}  // namespace sl::cupti
