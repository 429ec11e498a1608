#pragma once
// Synthetic CUPTI activity records for the tracer's tests (no GPU, no CUPTI
// calls): what CUPTI's buffers hold for a kernel and an external correlation.

#include <cupti_activity.h>

#include <cstdint>
#include <cstring>

namespace sl::cupti::test_records {

// `graph`: CUPTI's graphId of a graph launch's kernel (0: launched alone).
inline CUpti_ActivityKernel10 kernel_record(uint32_t device, uint32_t stream, uint32_t corr, uint64_t start,
                                            uint64_t end, const char* name, uint32_t graph = 0) {
  CUpti_ActivityKernel10 r;
  std::memset(&r, 0, sizeof r);
  r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  r.deviceId = device;
  r.streamId = stream;
  r.correlationId = corr;
  r.start = start;
  r.end = end;
  r.name = name;
  r.graphId = graph;
  r.gridX = 4; r.gridY = 1; r.gridZ = 1; r.blockX = 256; r.blockY = 1; r.blockZ = 1;
  return r;
}

inline CUpti_ActivityExternalCorrelation external_record(uint32_t corr, uint64_t ext) {
  CUpti_ActivityExternalCorrelation r;
  std::memset(&r, 0, sizeof r);
  r.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  r.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  r.externalId = ext;
  r.correlationId = corr;
  return r;
}

}  // namespace sl::cupti::test_records
