#include "app/common/run_recorder.h"

#include <algorithm>

namespace sl::app {
namespace {
constexpr size_t kBatchEvents = 65536;
}

Result<RecordedRun> record_run(trace::TraceStore& store, const trace::RunInfo& info,
                               const std::string& program_text,
                               const std::vector<sched::StreamAssignmentEntry>& streams, exec::Backend& backend,
                               const sched::LoweredProgram& program, const exec::RunOptions& options,
                               const std::function<void(int64_t saved, int64_t total)>& on_saved,
                               const std::function<void(int64_t run_id)>& on_begun) {
  SL_ASSIGN_OR_RETURN(int64_t run_id, store.begin_run(info, program_text, streams));
  if (on_begun) on_begun(run_id);
  Result<exec::RunOutput> output = backend.run(program, options);
  if (!output) {
    // Keep the record of the attempt; the error is what the user sees.
    (void)store.finish_run(run_id, trace::RunStatus::kFailed, 0,
                           {{"backend_error", 1, output.status().message()}});
    return output.status();
  }
  trace::Trace& trace = output->trace;
  const auto total = static_cast<int64_t>(trace.events.size());
  if (on_saved) on_saved(0, total);
  for (size_t first = 0; first < trace.events.size(); first += kBatchEvents) {
    size_t count = std::min(kBatchEvents, trace.events.size() - first);
    Status appended = store.append(run_id, trace, first, count);
    if (!appended.is_ok()) {
      (void)store.finish_run(run_id, trace::RunStatus::kFailed, 0, trace.counters);
      return appended;
    }
    if (on_saved) on_saved(static_cast<int64_t>(first + count), total);
  }
  if (Status deps = store.append_dependencies(run_id, trace.dependencies); !deps.is_ok()) {
    (void)store.finish_run(run_id, trace::RunStatus::kFailed, 0, trace.counters);  // the first error is reported
    return deps;
  }
  SL_RETURN_IF_ERROR(store.finish_run(run_id, trace::RunStatus::kComplete, trace.makespan_ns(), trace.counters));
  RecordedRun recorded;
  recorded.run_id = run_id;
  recorded.output = std::move(output).value();
  return recorded;
}

}  // namespace sl::app
