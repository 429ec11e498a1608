#pragma once
// Where decoded CUPTI records go. The live tracer (cupti_api.cc) and the
// capture-file reader both feed a sink, so the logic behind it is the same
// with or without a GPU.

#include <cstdint>

#include "cupti_tracer/records.h"

namespace sl::cupti {

class ActivitySink {
 public:
  virtual ~ActivitySink() = default;
  // Called from CUPTI's buffer-completed callback: on CUPTI's worker thread, or
  // on the thread inside cuptiActivityFlushAll. Implementations lock their own
  // state and must never call back into CUPTI (no flush from here).
  virtual void on_activity(const Activity& activity) = 0;
  virtual void on_dropped(uint64_t count) = 0;       // cuptiActivityGetNumDroppedRecords
  virtual void on_unknown_kind(uint32_t kind) = 0;   // a record decode_activity() does not know
};

}  // namespace sl::cupti
