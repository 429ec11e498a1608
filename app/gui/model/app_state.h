#pragma once
// The GUI's whole model (STYLE item 7): the open database and its runs, the
// current run with its trace and derived index and statistics, the compare
// run, viewport, selection, stream edits, search, messages, the rerun job and
// the run being opened.
// `apply` is the only code that changes it; views read it and push Actions.
// No ImGui here.

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "app/gui/layout/compare.h"
#include "app/gui/layout/kernel_table.h"
#include "app/gui/layout/stats.h"
#include "app/gui/layout/track_index.h"
#include "app/gui/layout/viewport.h"
#include "app/gui/model/action.h"
#include "app/gui/model/program_outline.h"
#include "app/gui/model/services.h"
#include "core/sched/lowering.h"
#include "core/trace/run_info.h"
#include "core/trace/store/trace_store.h"
#include "core/trace/compact_trace.h"

namespace sl::gui {

// A loaded run: its trace and everything derived from it once. The trace
// is compact (compact_trace.h): bytes, flops and correlation stay in the
// store until an event is detailed (event_extras).
struct LoadedRun {
  trace::RunInfo info;
  trace::CompactTrace trace;
  TraceIndex index;
  TraceStats stats;
  std::vector<sched::StreamAssignmentEntry> streams;  // as saved with the run
  std::string program_text;                            // empty for imported/captured runs
  ProgramOutline outline;                              // from program_text (empty without one)
  // Instructions a trace-driven rerun launches as nodes of XLA's command
  // buffers (CUDA graphs): ordered by the graph's edges, so a stream edit of
  // one changes nothing (app::graph_node_instructions).
  std::set<std::string> graph_nodes;
  double load_ms = 0;                                  // read + index, wall clock
  // The same on the loading thread's CPU clock, and its parts (a busy
  // machine stretches the wall time, not these); statistics come later.
  double load_cpu_ms = 0, read_cpu_ms = 0, index_cpu_ms = 0, stats_cpu_ms = 0;
  // Statistics are computed on a worker after the run is shown (a million
  // events take a few hundred ms); `stats` is empty while this is valid.
  // Declared last: destroying it waits for the worker, which reads `trace`.
  std::future<std::pair<TraceStats, double>> pending_stats;
  bool stats_pending() const { return pending_stats.valid(); }
  // The comparison the loader made for (baseline id, current id), until
  // update_comparison takes it.
  std::shared_ptr<Comparison> comparison;
  std::pair<int64_t, int64_t> compared{0, 0};
  // event_extras' last answers (UI thread only): Details and the tooltip ask every frame.
  struct CachedExtras {
    uint32_t event = 0;
    std::optional<trace::TraceStore::EventExtras> extras;
  };
  mutable std::vector<CachedExtras> extras_cache;
};

// Opening a run (or a compare baseline) on a worker thread: reading a million
// events and indexing them takes a while, and the window keeps drawing.
struct LoadJob {
  bool active = false;
  int64_t run_id = 0;
  bool baseline = false;               // Compare: the result becomes the baseline
  std::shared_ptr<JobProgress> progress;
  std::future<Result<std::shared_ptr<LoadedRun>>> result;
  std::chrono::steady_clock::time_point started;
};

struct RerunJob {
  bool active = false;
  std::string backend;
  int64_t source_run = 0;
  std::shared_ptr<JobProgress> progress;
  std::future<Result<int64_t>> result;
  std::chrono::steady_clock::time_point started;
};

// The simulator's search for the open run's program (Suggest).
struct SuggestJob {
  bool active = false;
  int64_t source_run = 0;
  std::shared_ptr<JobProgress> progress;
  std::future<Result<SuggestOutcome>> result;
  std::chrono::steady_clock::time_point started;
};

// Statistics of a measured range (SetRange), computed on a worker: a range
// over millions of events takes longer than a frame. The worker holds the run
// it reads, so replacing the current run meanwhile is safe.
struct RangeJob {
  std::future<RangeStats> result;
  bool active() const { return result.valid(); }
};

struct Message {
  std::string text;
  bool error = false;
};

struct AppState {
  Services services;

  std::string db_path;
  std::unique_ptr<trace::TraceStore> store;
  std::vector<trace::RunInfo> runs;
  std::vector<std::string> recent_files;   // most recent first

  std::shared_ptr<LoadedRun> current;      // null: no run open
  std::shared_ptr<LoadedRun> baseline;     // null: not comparing
  std::shared_ptr<Comparison> comparison;  // baseline vs current

  Viewport viewport;
  int64_t selected = -1;                   // event index in current->trace
  sched::StreamOverrides edits;            // instruction -> stream, for the next rerun

  std::string search_text;
  std::vector<uint32_t> search_hits;       // event indices, in time order (by duration after SearchLongest)
  int64_t search_cursor = -1;
  bool search_by_duration = false;         // SearchLongest: hits sorted longest first

  std::optional<RangeStats> range;         // the measured range (SetRange) and its statistics
  RangeJob range_job;                      // range's statistics while they are computed (range holds t0, t1)
  std::vector<std::future<RangeStats>> stale_ranges;  // superseded range jobs, dropped when they finish
  // A tab the views should bring forward (Reveal, ShowTab): `generation`
  // changes with every request so a view acts on each once.
  struct TabRequest {
    std::string tab;
    int64_t generation = 0;
  } tab_request;

  Message message;
  RerunJob job;
  // Cancelled reruns whose worker is still busy (the cpu backend cannot stop
  // inside an operation): polled and dropped when they finish, never installed.
  std::vector<std::future<Result<int64_t>>> cancelled_reruns;
  LoadJob load;
  SuggestJob suggest;
  std::optional<SuggestOutcome> suggestions;  // the last search's result
  int64_t compare_after_load = 0;          // ApplySuggestion: compare the next opened run with this one
  std::string pending_screenshot;          // set by ExportPng; the frame loop writes it
  int64_t frames_applied = 0;              // number of PollJob calls (one per frame)

  bool has_run() const { return current != nullptr; }
  bool comparing() const { return baseline != nullptr && comparison != nullptr; }
  bool busy() const { return job.active || load.active || suggest.active; }
  bool range_pending() const { return range_job.active(); }
  // Statistics still being computed on a worker: the run's or a range's.
  bool stats_pending() const {
    return (current != nullptr && current->stats_pending()) || range_pending() || !stale_ranges.empty();
  }
};

// The one place where state changes. Errors land in state.message.
void apply(AppState& state, const Action& action);

// Bytes, flops and correlation of event `e` of `run` (the current run or the
// baseline), read from the open store on the UI thread; nullopt when the
// store cannot say (no store, an event it does not hold).
std::optional<trace::TraceStore::EventExtras> event_extras(const AppState& state, const LoadedRun& run, uint32_t e);

// The stream an instruction will run on at the next rerun (saved + edits).
int effective_stream(const AppState& state, const std::string& instruction);
// The overrides a rerun of the current run uses: saved overrides + edits.
sched::StreamOverrides rerun_overrides(const AppState& state);

// Why `backend` cannot rerun the open run; empty when it can (the buttons'
// tooltips and the Rerun action agree on this).
std::string rerun_refusal(const AppState& state, const std::string& backend);

// A relative PNG path is saved beside the database (not in whatever the
// working directory is); the result is absolute.
std::string export_path(const std::string& db_path, const std::string& typed);

// The run a GUI rerun was made from (its config's rerun_of); 0 for others.
int64_t rerun_source(const trace::RunInfo& run);

// Marks the rerun's run cancelled in the store and leaves its worker behind
// (headless quit, window close): what File > Quit does before exiting.
void cancel_for_quit(AppState& state);

// Blocks until a running rerun and any run being opened finish, and applies
// their results (headless mode, tests).
void wait_for_job(AppState& state);

}  // namespace sl::gui
