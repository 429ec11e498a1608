#pragma once
// The seams between the GUI model and the rest of streamlens: opening a
// store, which backends exist here, and the rerun pipeline (parse, lower
// with overrides, run, save). Passed explicitly so tests can substitute
// them; default_services() wires the real ones.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "app/gui/model/suggest.h"
#include "core/common/status.h"
#include "core/exec/backend.h"
#include "core/sched/streams.h"
#include "core/trace/store/trace_store.h"

namespace sl::gui {

// Shared between the UI thread and a rerun or load job: written by the job, read by the UI.
struct JobProgress {
  enum Phase : int { kQueued, kParsing, kLowering, kRunning, kSaving, kDone, kReading, kIndexing };
  std::atomic<int> phase{kQueued};
  std::atomic<int64_t> done{0};
  std::atomic<int64_t> total{0};
  std::atomic<int64_t> run_id{0};      // rerun: the run it records, once begun
  std::atomic<bool> cancel{false};     // set by the UI; the job stops at its next check
};
const char* phase_name(int phase);

struct RerunRequest {
  std::string db_path;
  int64_t source_run = 0;
  std::string backend;            // sim | cpu | cuda
  std::string device_model;       // sim device model (from the source run when it was a sim run)
  std::string program_text;
  std::string program_name;
  sched::StreamOverrides overrides;
  int64_t replicas = 0;           // 0: the module's own (as `streamlens run`)
  int64_t partitions = 0;
  int comm_sms = exec::kDefaultCommSms;  // as `streamlens run --comm-sms`
  // sim: costed by this linked capture's kernel times, as XLA launches the
  // module read from `module_path` (`streamlens run --kernel-times`); 0: by
  // the device model alone.
  int64_t kernel_times_run = 0;
  std::string module_path;
};

struct Services {
  std::function<Result<std::unique_ptr<trace::TraceStore>>(const std::string& path)> open_store;
  // Empty string when `backend` can run here; otherwise why not (for a tooltip).
  std::function<std::string(const std::string& backend)> unavailable_reason;
  // Runs on a worker thread: must not touch AppState. Returns the new run id.
  std::function<Result<int64_t>(const RerunRequest& request, JobProgress& progress)> rerun;
  // Runs on a worker thread: the simulator's search for a better stream assignment.
  std::function<Result<SuggestOutcome>(const SuggestRequest& request, JobProgress& progress)> suggest;
};

// The real store (existing files only), sim and cpu backends (cuda when built
// with it and a GPU is present), and the full parse/lower/run/save pipeline.
Services default_services();

}  // namespace sl::gui
