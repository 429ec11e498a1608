#pragma once
// Typed views of the CUPTI activity records the tracer uses (STYLE item 6).
// Decoding is pure struct reading: tests build records by hand and feed them
// here without a GPU. Only cupti_api.cc calls into CUPTI itself.

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

namespace sl::cupti {

struct KernelActivity {
  uint32_t device = 0;
  uint32_t context = 0;
  uint32_t stream = 0;       // CUPTI stream id (unique within a context)
  uint32_t correlation = 0;  // runtime/driver API correlation id
  uint64_t start_ns = 0;     // GPU timestamps, CUPTI time base
  uint64_t end_ns = 0;
  // Mangled kernel name. Valid while the record is handled: CUPTI keeps
  // one copy per kernel for the session; a capture file's reader, per line.
  std::string_view name;
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  uint32_t graph_id = 0;     // CUPTI id of the graph that launched it; 0: not a graph launch
};

struct MemcpyActivity {
  uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  uint64_t start_ns = 0, end_ns = 0;
  uint64_t bytes = 0;
  uint8_t copy_kind = 0;     // CUpti_ActivityMemcpyKind
  uint32_t graph_id = 0;     // as KernelActivity::graph_id
};

struct MemsetActivity {
  uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  uint64_t start_ns = 0, end_ns = 0;
  uint64_t bytes = 0;
  uint32_t value = 0;
  uint32_t graph_id = 0;     // as KernelActivity::graph_id
};

struct SyncActivity {
  uint32_t context = 0, stream = 0, correlation = 0;
  uint32_t type = 0;         // CUpti_ActivitySynchronizationType
  uint64_t start_ns = 0, end_ns = 0;  // CPU timestamps of the blocking call
};

struct CudaEventActivity {
  uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  uint32_t event = 0;
  uint64_t device_timestamp_ns = 0;  // 0 unless device timestamps were enabled
};

struct ExternalCorrelationActivity {
  uint32_t external_kind = 0;  // CUpti_ExternalCorrelationKind
  uint64_t external_id = 0;
  uint32_t correlation = 0;
};

struct OverheadActivity {
  uint32_t overhead_kind = 0;
  uint64_t start_ns = 0, end_ns = 0;
};

using Activity = std::variant<KernelActivity, MemcpyActivity, MemsetActivity, SyncActivity, CudaEventActivity,
                              ExternalCorrelationActivity, OverheadActivity>;

// `record` points at a CUpti_Activity (an anonymous struct in cupti_activity.h,
// so it cannot be declared here). nullopt for a kind the tracer does not know
// (callers count those).
std::optional<Activity> decode_activity(const void* record);

// "memcpy HtoD" etc. for a CUpti_ActivityMemcpyKind.
const char* memcpy_kind_name(uint8_t copy_kind);

}  // namespace sl::cupti
