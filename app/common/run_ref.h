#pragma once
// A run named on the command line (or a rerun's source): an id, `last`
// (the newest run) or `last-N` (N runs before the newest).

#include <string>

#include "core/common/status.h"
#include "core/trace/store/trace_store.h"

namespace sl::app {

Result<int64_t> resolve_run(trace::TraceStore& store, const std::string& ref);

struct StoredRun {
  int64_t id = 0;
  trace::RunInfo info;
  trace::Trace trace;
};

// resolve_run + run_info + load_trace.
Result<StoredRun> load_stored_run(trace::TraceStore& store, const std::string& ref);

// True when the run was linked to its XLA module (`link`, `capture --xla-dump`).
bool is_linked_run(const trace::RunInfo& info);

}  // namespace sl::app
