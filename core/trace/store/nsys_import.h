#pragma once
// Importing an Nsight Systems SQLite export (`nsys export --type sqlite`) as
// a run: CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY and _MEMSET rows become events,
// names resolved through StringIds. The file is opened read-only.

#include <string>

#include "core/common/status.h"
#include "core/trace/run_info.h"
#include "core/trace/trace.h"

namespace sl::trace {

struct ImportedRun {
  RunInfo info;  // backend "nsys", device_model from TARGET_INFO_GPU when present
  Trace trace;   // times relative to the earliest event; counters for odd records
};

// Tracks: one device per deviceId (renumbered from 0 in ascending order);
// per device, CUDA streams that run NCCL kernels become communication
// streams (kCommStreamBase + k), the others compute streams 0, 1, ... in
// ascending streamId order. Kernel kinds come from their names (nccl ->
// collective, gemm/cutlass/xmma/cublas -> gemm, elementwise -> elementwise).
// kInvalidInput (naming the file) for a file that is not an nsys export.
Result<ImportedRun> import_nsys_sqlite(const std::string& path);

}  // namespace sl::trace
