#pragma once
// The SQLite trace store (docs/store.md). One file holds many runs.
// SQLite appears only behind this header (core/trace/store).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/sched/lowering.h"
#include "core/trace/compact_trace.h"
#include "core/trace/run_info.h"
#include "core/trace/trace.h"

namespace sl::trace {

class TraceStore {
 public:
  enum class Mode { kCreateIfMissing, kOpenExisting, kReadOnly };

  // kInvalidInput naming the file for: not a streamlens database, corrupt,
  // newer schema version. Such files are never modified.
  static Result<std::unique_ptr<TraceStore>> open(const std::string& path, Mode mode = Mode::kCreateIfMissing);
  virtual ~TraceStore() = default;

  // Starts a run in state `running` (visible to readers at once) and stores its
  // program text (deduplicated by hash) and stream assignment.
  virtual Result<int64_t> begin_run(const RunInfo& info, const std::string& program_text,
                                    const std::vector<sched::StreamAssignmentEntry>& streams) = 0;
  // Appends a batch in one transaction; call repeatedly while a run records.
  // Event indices in `dependencies` refer to `events` of this batch plus all
  // earlier batches of the run, in order.
  virtual Status append(int64_t run_id, const Trace& batch, size_t first_event, size_t event_count) = 0;
  virtual Status append_dependencies(int64_t run_id, const std::vector<Dependency>& dependencies) = 0;
  virtual Status finish_run(int64_t run_id, RunStatus status, int64_t makespan_ns,
                            const std::vector<Counter>& counters) = 0;

  // Convenience: begin + append all + finish(kComplete).
  virtual Result<int64_t> save_run(RunInfo info, const std::string& program_text,
                                   const std::vector<sched::StreamAssignmentEntry>& streams,
                                   const Trace& trace) = 0;

  virtual Result<std::vector<RunInfo>> list_runs() = 0;
  virtual Result<RunInfo> run_info(int64_t run_id) = 0;
  // Events in timeline order (device, stream, start).
  virtual Result<Trace> load_trace(int64_t run_id) = 0;
  // The same events as columns without bytes, flops and correlation (a
  // viewer's form of a long run: compact_trace.h), decoded straight into them.
  virtual Result<CompactTrace> load_compact(int64_t run_id) = 0;
  // Those fields of one event, named by its track and CompactTrace's seq;
  // not_found when the run has no such event.
  struct EventExtras {
    int64_t bytes = 0;
    int64_t flops = 0;
    int64_t correlation = 0;
  };
  virtual Result<EventExtras> load_event_extras(int64_t run_id, int32_t device, int32_t stream, int64_t seq) = 0;
  virtual Result<std::string> program_text(int64_t run_id) = 0;
  virtual Result<std::vector<sched::StreamAssignmentEntry>> stream_assignment(int64_t run_id) = 0;

  virtual const std::string& path() const = 0;
};

}  // namespace sl::trace
