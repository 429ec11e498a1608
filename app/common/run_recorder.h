#pragma once
// Runs a lowered program on a backend while keeping the database honest: the
// run is `running` before execution starts, `complete` with every event after,
// or `failed` when the backend or the database reports an error. Shared by the CLI and the GUI.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/exec/backend.h"
#include "core/trace/store/trace_store.h"

namespace sl::app {

struct RecordedRun {
  int64_t run_id = 0;
  exec::RunOutput output;
};

Result<RecordedRun> record_run(trace::TraceStore& store, const trace::RunInfo& info,
                               const std::string& program_text,
                               const std::vector<sched::StreamAssignmentEntry>& streams, exec::Backend& backend,
                               const sched::LoweredProgram& program, const exec::RunOptions& options,
                               const std::function<void(int64_t saved, int64_t total)>& on_saved = nullptr,
                               const std::function<void(int64_t run_id)>& on_begun = nullptr);

}  // namespace sl::app
