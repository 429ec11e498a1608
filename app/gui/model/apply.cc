// apply(): the only code that changes AppState (STYLE item 7). This file
// dispatches the actions and holds loading, search and selection; reruns,
// suggestions and cancelling have their own files (apply_internal.h).

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "app/common/command_buffer_setup.h"
#include "app/common/kernel_times.h"
#include "app/gui/layout/ruler.h"
#include "app/gui/model/app_state.h"
#include "app/gui/model/apply_internal.h"
#include "core/hlo/parser.h"
#include "core/sched/lowering.h"

namespace sl::gui {
namespace {

constexpr size_t kMaxRecentFiles = 10;

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// The comparison of the run being loaded with `other` (the current run when
// loading a baseline, the baseline when loading a current run), made on the
// loader: core's comparison needs whole events (it groups launches by
// correlation, which the compact trace leaves in the store), read here and
// dropped at once. A failure leaves it to update_comparison.
void precompare(trace::TraceStore& store, LoadedRun& run, const trace::RunInfo& other, bool baseline) {
  Result<trace::Trace> mine = store.load_trace(run.info.id);
  if (!mine) return;
  Result<trace::Trace> theirs = store.load_trace(other.id);
  if (!theirs) return;
  const trace::RunInfo& base_info = baseline ? run.info : other;
  const trace::RunInfo& current_info = baseline ? other : run.info;
  run.comparison = std::make_shared<Comparison>(
      compare_for_view(base_info, baseline ? *mine : *theirs, current_info, baseline ? *theirs : *mine));
  run.compared = {base_info.id, current_info.id};
}

// Runs on a worker thread with its own connection (SQLite connections are
// not shared across threads here); touches nothing but its arguments.
Result<std::shared_ptr<LoadedRun>> load_run(const Services& services, const std::string& db_path, int64_t run_id,
                                            const std::optional<trace::RunInfo>& compare_with, bool baseline,
                                            JobProgress& progress) {
  auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_ms();
  progress.phase = JobProgress::kReading;
  SL_ASSIGN_OR_RETURN(std::unique_ptr<trace::TraceStore> store, services.open_store(db_path));
  auto run = std::make_shared<LoadedRun>();
  SL_ASSIGN_OR_RETURN(run->info, store->run_info(run_id));
  progress.total = run->info.event_count;
  SL_ASSIGN_OR_RETURN(run->trace, store->load_compact(run_id));
  // Imported and captured runs have no program: they can be viewed, not rerun.
  Result<std::string> text = store->program_text(run_id);
  if (text) run->program_text = std::move(text).value();
  Result<std::vector<sched::StreamAssignmentEntry>> streams = store->stream_assignment(run_id);
  if (streams) run->streams = std::move(streams).value();
  if (!run->program_text.empty()) {
    // A program that no longer parses is still shown; reruns report the parse error.
    Result<hlo::Module> module = hlo::parse_program(run->program_text, run->info.program_name + ".hlo");
    const app::KernelTimesSource times = app::kernel_times_source(run->info);
    if (module && (run->streams.empty() || times.run > 0)) {
      if (Result<sched::LoweredProgram> lowered = sched::lower(*module, {})) {
        // A capture linked to its XLA module ran on CUDA's streams, not on an
        // assignment of ours: edits start from the module's as lowered, which
        // its reruns use.
        if (run->streams.empty()) run->streams = lowered->streams;
        // Its reruns launch the module as XLA's thunk dump says.
        if (times.run > 0 && !times.module_path.empty()) {
          if (Result<app::CommandBufferInfo> cb =
                  app::command_buffer_setup(times.module_path, *module, *lowered, "auto", {})) {
            run->graph_nodes = app::graph_node_instructions(*cb, *lowered);
          }
        }
      }
    }
    if (module) run->outline = outline_program(*module, run->streams);
  }
  progress.phase = JobProgress::kIndexing;
  const double cpu1 = thread_cpu_ms();
  run->index = build_index(run->trace);
  const double cpu2 = thread_cpu_ms();
  run->load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  run->read_cpu_ms = cpu1 - cpu0;
  run->index_cpu_ms = cpu2 - cpu1;
  run->load_cpu_ms = cpu2 - cpu0;
  if (compare_with) precompare(*store, *run, *compare_with, baseline);
  progress.phase = JobProgress::kDone;
  return run;
}

}  // namespace

std::optional<trace::TraceStore::EventExtras> event_extras(const AppState& state, const LoadedRun& run, uint32_t e) {
  if (!state.store || e >= run.trace.events.size()) return std::nullopt;
  for (const auto& c : run.extras_cache) {
    if (c.event == e) return c.extras;
  }
  const trace::EventRef ev = run.trace.events[e];
  const uint32_t seq = run.trace.events.seq(e);
  std::optional<trace::TraceStore::EventExtras> extras;
  if (seq != trace::EventColumns::kNoSeq) {
    Result<trace::TraceStore::EventExtras> read = state.store->load_event_extras(run.info.id, ev.device, ev.stream, seq);
    if (read) extras = *read;
  }
  constexpr size_t kCached = 4;
  if (run.extras_cache.size() >= kCached) run.extras_cache.erase(run.extras_cache.begin());
  run.extras_cache.push_back({e, extras});
  return extras;
}

namespace apply_detail {

void fail(AppState& s, std::string text) { s.message = {std::move(text), true}; }
void info(AppState& s, std::string text) { s.message = {std::move(text), false}; }

void refresh_runs(AppState& s) {
  if (!s.store) return;
  Result<std::vector<trace::RunInfo>> runs = s.store->list_runs();
  if (!runs) return fail(s, runs.status().message());
  s.runs = std::move(runs).value();
}

// Starts loading `run_id` on a worker; finish_load() installs it.
void start_load(AppState& s, int64_t run_id, bool baseline) {
  s.load = LoadJob{};
  s.load.active = true;
  s.load.run_id = run_id;
  s.load.baseline = baseline;
  s.load.progress = std::make_shared<JobProgress>();
  s.load.started = std::chrono::steady_clock::now();
  // The run it will be compared with once installed, if any.
  std::optional<trace::RunInfo> other;
  if (baseline && s.current) other = s.current->info;
  if (!baseline && s.baseline) other = s.baseline->info;
  s.load.result = std::async(std::launch::async, [services = s.services, path = s.db_path, run_id, other, baseline,
                                                  progress = s.load.progress] {
    return load_run(services, path, run_id, other, baseline, *progress);
  });
  info(s, fmt::format("loading run {}...", run_id));
}

}  // namespace apply_detail

namespace {

using namespace apply_detail;  // the helpers apply()'s files share (apply_internal.h)

// What "fit" shows: the current run, or when comparing the two compared
// iterations drawn on top of each other (the timeline shifts the baseline so
// they start together): a captured step and its simulation, not the whole capture.
Viewport extent(const AppState& s) {
  int64_t begin = s.current->index.begin_ns, end = s.current->index.end_ns;
  if (s.comparing() && !s.baseline->index.empty()) {
    const Comparison& c = *s.comparison;
    begin = c.current_span.start_ns;
    end = std::max(c.current_span.end_ns, begin + (c.base_span.end_ns - c.base_span.start_ns));
  }
  return {begin, end};
}

void fit_all(AppState& s) {
  if (!s.current || s.current->index.empty()) {
    s.viewport = {0, 1000000};
    return;
  }
  Viewport e = extent(s);
  s.viewport = fit_range(e.start_ns, e.end_ns);
}

// The loader's comparison when it made one for this pair (precompare), else
// one made here the same way: both runs read whole again, then dropped.
void update_comparison(AppState& s) {
  s.comparison.reset();
  if (!s.current || !s.baseline) return;
  const std::pair<int64_t, int64_t> pair{s.baseline->info.id, s.current->info.id};
  for (LoadedRun* run : {s.baseline.get(), s.current.get()}) {
    if (run->comparison && run->compared == pair) s.comparison = run->comparison;
    run->comparison.reset();
  }
  if (!s.comparison) {
    if (!s.store) return fail(s, "no database is open to compare runs from");
    Result<trace::Trace> base = s.store->load_trace(s.baseline->info.id);
    if (!base) return fail(s, base.status().message());
    Result<trace::Trace> current = s.store->load_trace(s.current->info.id);
    if (!current) return fail(s, current.status().message());
    s.comparison = std::make_shared<Comparison>(compare_for_view(s.baseline->info, *base, s.current->info, *current));
  }
  const LoadedRun& b = *s.baseline;
  const LoadedRun& c = *s.current;
  s.comparison->base_span = compared_span(b.trace, s.comparison->summary.a.iteration, b.index.begin_ns, b.index.end_ns);
  s.comparison->current_span =
      compared_span(c.trace, s.comparison->summary.b.iteration, c.index.begin_ns, c.index.end_ns);
}

std::string to_lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

void run_search(AppState& s) {
  s.search_hits.clear();
  s.search_cursor = -1;
  s.search_by_duration = false;
  if (!s.current || s.search_text.empty()) return;
  const trace::CompactTrace& t = s.current->trace;
  // Match the interned strings once, then the events by id: O(strings + events).
  const std::string needle = to_lower(s.search_text);
  std::vector<uint8_t> match(t.strings.size(), 0);
  for (size_t i = 1; i < t.strings.size(); ++i) match[i] = to_lower(t.strings.get(static_cast<uint32_t>(i))).find(needle) != std::string::npos;
  for (uint32_t i = 0; i < t.events.size(); ++i) {
    const auto& e = t.events[i];
    if ((e.name < match.size() && match[e.name]) || (e.instruction < match.size() && match[e.instruction])) {
      s.search_hits.push_back(i);
    }
  }
  std::stable_sort(s.search_hits.begin(), s.search_hits.end(),
                   [&](uint32_t a, uint32_t b) { return t.events[a].start_ns < t.events[b].start_ns; });
}

// Keep the zoom, but move the view so event `e` is visible (centred when it was not).
void reveal(AppState& s, int64_t e) {
  const auto& ev = s.current->trace.events[static_cast<size_t>(e)];
  if (ev.start_ns >= s.viewport.start_ns && ev.end_ns <= s.viewport.end_ns) return;
  int64_t span = s.viewport.span_ns();
  if (ev.duration_ns() > span) {
    s.viewport = fit_range(ev.start_ns, ev.end_ns);
    return;
  }
  int64_t mid = ev.start_ns + ev.duration_ns() / 2;
  s.viewport = {mid - span / 2, mid - span / 2 + span};
}

void open_database(AppState& s, const std::string& path) {
  if (s.job.active) return fail(s, "wait for the rerun to finish before opening another database");
  if (s.load.active) return fail(s, fmt::format("wait for run {} to finish loading", s.load.run_id));
  if (path.empty()) return fail(s, "no database path given");
  Result<std::unique_ptr<trace::TraceStore>> store = s.services.open_store(path);
  if (!store) return fail(s, store.status().message());
  s.store = std::move(store).value();
  s.db_path = path;
  s.current.reset();
  s.baseline.reset();
  s.comparison.reset();
  s.selected = -1;
  s.edits.clear();
  s.search_hits.clear();
  s.runs.clear();
  std::error_code ec;
  std::string absolute = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec) absolute = path;
  auto& recent = s.recent_files;
  recent.erase(std::remove(recent.begin(), recent.end(), absolute), recent.end());
  recent.insert(recent.begin(), absolute);
  if (recent.size() > kMaxRecentFiles) recent.resize(kMaxRecentFiles);
  // A failed earlier open must not linger once this one worked.
  s.message = {};
  refresh_runs(s);
  if (!s.message.error) info(s, fmt::format("opened {} ({} runs)", path, s.runs.size()));
}

void open_run(AppState& s, int64_t run_id) {
  if (!s.store) return fail(s, "no database is open");
  if (s.load.active) return fail(s, fmt::format("wait for run {} to finish loading", s.load.run_id));
  start_load(s, run_id, false);
}

void clear_range(AppState& s) {
  if (s.range_job.active()) s.stale_ranges.push_back(std::move(s.range_job.result));
  s.range_job = RangeJob{};
  s.range.reset();
}

// The range is shown at once; its statistics follow from a worker (poll_range).
void set_range(AppState& s, const SetRange& a) {
  if (!s.current) return fail(s, "open a run first");
  clear_range(s);
  RangeStats shown;
  shown.t0 = std::min(a.t0_ns, a.t1_ns);
  shown.t1 = std::max(a.t0_ns, a.t1_ns);
  s.range = shown;
  s.range_job.result = std::async(std::launch::async, [run = std::shared_ptr<const LoadedRun>(s.current), shown] {
    return range_stats(run->trace, shown.t0, shown.t1);
  });
}

void poll_range(AppState& s) {
  auto ready = [](std::future<RangeStats>& f) { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; };
  std::erase_if(s.stale_ranges, ready);
  if (!s.range_job.active() || !ready(s.range_job.result)) return;
  RangeStats stats = s.range_job.result.get();
  s.range_job = RangeJob{};
  if (s.range && s.range->t0 == stats.t0 && s.range->t1 == stats.t1) s.range = std::move(stats);
}

void install_current(AppState& s, std::shared_ptr<LoadedRun> run) {
  const int64_t run_id = run->info.id;
  run->pending_stats = std::async(std::launch::async, [trace = &run->trace, index = &run->index] {
    const double cpu0 = thread_cpu_ms();
    TraceStats stats = compute_stats(*trace, *index);
    return std::make_pair(std::move(stats), thread_cpu_ms() - cpu0);
  });
  s.current = std::move(run);
  if (s.baseline && s.baseline->info.id == run_id) s.baseline.reset();
  update_comparison(s);
  s.selected = -1;
  s.edits.clear();
  clear_range(s);
  run_search(s);
  fit_all(s);
  const auto& r = *s.current;
  if (r.trace.events.empty()) {
    info(s, fmt::format("run {} has no events", run_id));
  } else {
    info(s, fmt::format("run {}: {} events on {} tracks, loaded in {:.0f} ms", run_id, r.trace.events.size(),
                        r.index.tracks.size(), r.load_ms));
  }
}

void compare(AppState& s, int64_t run_id) {
  if (!s.current) return fail(s, "open a run before comparing");
  if (run_id == s.current->info.id) return fail(s, "a run cannot be compared with itself");
  if (s.load.active) return fail(s, fmt::format("wait for run {} to finish loading", s.load.run_id));
  start_load(s, run_id, true);
}

void install_baseline(AppState& s, std::shared_ptr<LoadedRun> run) {
  if (!s.current || run->info.id == s.current->info.id) return;  // the current run changed meanwhile
  const int64_t run_id = run->info.id;
  s.baseline = std::move(run);
  update_comparison(s);
  fit_all(s);
  info(s, fmt::format("comparing run {} (current) with run {} (baseline): {} changed", s.current->info.id, run_id,
                      s.comparison->changed_count));
}

// Installs a load once it has finished.
void finish_load(AppState& s) {
  if (!s.load.active) return;
  if (s.load.result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  Result<std::shared_ptr<LoadedRun>> run = s.load.result.get();
  const int64_t run_id = s.load.run_id;
  const bool baseline = s.load.baseline;
  s.load = LoadJob{};
  if (!run) return fail(s, fmt::format("run {}: {}", run_id, run.status().message()));
  if (baseline) {
    install_baseline(s, std::move(run).value());
  } else {
    install_current(s, std::move(run).value());
    // An applied suggestion: its run against the one it was found for.
    if (const int64_t against = std::exchange(s.compare_after_load, 0); against > 0 && against != s.current->info.id) {
      start_load(s, against, true);
    }
  }
}

void set_stream(AppState& s, const SetStream& a) {
  if (!s.current) return fail(s, "open a run first");
  const auto& streams = s.current->streams;
  auto it = std::find_if(streams.begin(), streams.end(),
                         [&](const sched::StreamAssignmentEntry& e) { return e.instruction == a.instruction; });
  if (it == streams.end()) return fail(s, "no instruction '" + a.instruction + "' in this run's program");
  if (!it->async_capable) return fail(s, "'" + a.instruction + "' cannot run asynchronously, so it stays on its stream");
  if (a.stream < 0) return fail(s, "stream numbers are >= 0");
  if (a.stream == it->stream) {
    s.edits.erase(a.instruction);
  } else {
    s.edits[a.instruction] = a.stream;
  }
  if (s.current->graph_nodes.count(a.instruction) != 0) {
    return info(s, fmt::format("{} -> stream {}: it runs as a node of a command buffer (CUDA graph), where XLA "
                               "orders work by the graph's edges, not by streams, so a rerun will show no change",
                               a.instruction, a.stream));
  }
  info(s, fmt::format("{} -> stream {} (rerun to see the effect)", a.instruction, a.stream));
}

void poll_stats(AppState& s) {
  if (!s.current || !s.current->stats_pending()) return;
  if (s.current->pending_stats.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  std::tie(s.current->stats, s.current->stats_cpu_ms) = s.current->pending_stats.get();
}

void poll_job(AppState& s) {
  ++s.frames_applied;
  poll_cancelled(s);
  finish_load(s);
  poll_stats(s);
  poll_range(s);
  finish_suggest(s);
  finish_rerun(s);
}

void select_instruction(AppState& s, const std::string& name) {
  if (!s.current) return fail(s, "open a run first");
  const trace::CompactTrace& t = s.current->trace;
  // The string's id, looked up once: comparing ids keeps 10M events at a few ms.
  uint32_t id = 0;
  while (id < t.strings.size() && t.strings.get(id) != name) ++id;
  if (name.empty() || id >= t.strings.size()) return fail(s, "no event for instruction '" + name + "'");
  int64_t best = -1;
  for (size_t i = 0; i < t.events.size(); ++i) {
    const auto& e = t.events[i];
    if (e.instruction != id && e.name != id) continue;
    if (best < 0 || e.start_ns < t.events[static_cast<size_t>(best)].start_ns) best = static_cast<int64_t>(i);
  }
  if (best < 0) return fail(s, "no event for instruction '" + name + "'");
  s.selected = best;
  reveal(s, best);
}

void search_longest(AppState& s) {
  if (s.search_hits.empty()) {
    if (!s.search_text.empty()) fail(s, "no match for '" + s.search_text + "'");
    return;
  }
  const trace::CompactTrace& t = s.current->trace;
  std::stable_sort(s.search_hits.begin(), s.search_hits.end(), [&](uint32_t a, uint32_t b) {
    return t.events[a].duration_ns() > t.events[b].duration_ns();
  });
  s.search_by_duration = true;
  s.search_cursor = 0;
  s.selected = s.search_hits[0];
  reveal(s, s.selected);
}

void request_tab(AppState& s, std::string tab) {
  s.tab_request.tab = std::move(tab);
  ++s.tab_request.generation;
}

void search_next(AppState& s, int direction) {
  if (s.search_hits.empty()) {
    if (!s.search_text.empty()) fail(s, "no match for '" + s.search_text + "'");
    return;
  }
  auto n = static_cast<int64_t>(s.search_hits.size());
  s.search_cursor = s.search_cursor < 0 ? (direction >= 0 ? 0 : n - 1) : ((s.search_cursor + direction) % n + n) % n;
  s.selected = s.search_hits[static_cast<size_t>(s.search_cursor)];
  reveal(s, s.selected);
}

}  // namespace

int effective_stream(const AppState& state, const std::string& instruction) {
  auto edit = state.edits.find(instruction);
  if (edit != state.edits.end()) return edit->second;
  if (state.current) {
    for (const auto& e : state.current->streams) {
      if (e.instruction == instruction) return e.stream;
    }
  }
  return sched::kMainStream;
}

std::string export_path(const std::string& db_path, const std::string& typed) {
  namespace fs = std::filesystem;
  fs::path path(typed);
  std::error_code ec;
  if (path.is_relative()) {
    fs::path base = db_path.empty() ? fs::current_path(ec) : fs::absolute(db_path, ec).parent_path();
    path = base / path;
  }
  return path.lexically_normal().string();
}

void apply(AppState& s, const Action& action) {
  std::visit(
      [&s](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, OpenDatabase>) {
          open_database(s, a.path);
        } else if constexpr (std::is_same_v<A, RefreshRuns>) {
          refresh_runs(s);
        } else if constexpr (std::is_same_v<A, OpenRun>) {
          open_run(s, a.run_id);
        } else if constexpr (std::is_same_v<A, Compare>) {
          compare(s, a.run_id);
        } else if constexpr (std::is_same_v<A, CloseCompare>) {
          s.baseline.reset();
          s.comparison.reset();
        } else if constexpr (std::is_same_v<A, SetStream>) {
          set_stream(s, a);
        } else if constexpr (std::is_same_v<A, ClearEdits>) {
          s.edits.clear();
        } else if constexpr (std::is_same_v<A, Rerun>) {
          rerun(s, a);
        } else if constexpr (std::is_same_v<A, CancelRerun>) {
          cancel_rerun(s);
        } else if constexpr (std::is_same_v<A, PollJob>) {
          poll_job(s);
        } else if constexpr (std::is_same_v<A, ZoomTo>) {
          s.viewport = normalized(a.start_ns, a.end_ns);
        } else if constexpr (std::is_same_v<A, ZoomAt>) {
          s.viewport = zoom_at(s.viewport, a.factor, a.anchor_ns);
        } else if constexpr (std::is_same_v<A, Pan>) {
          s.viewport = pan_by(s.viewport, a.delta_ns);
        } else if constexpr (std::is_same_v<A, FitAll>) {
          fit_all(s);
        } else if constexpr (std::is_same_v<A, Select>) {
          bool valid = s.current && a.event >= 0 && static_cast<size_t>(a.event) < s.current->trace.events.size();
          s.selected = valid ? a.event : -1;
        } else if constexpr (std::is_same_v<A, SelectInstruction>) {
          select_instruction(s, a.name);
        } else if constexpr (std::is_same_v<A, Search>) {
          s.search_text = a.text;
          run_search(s);
        } else if constexpr (std::is_same_v<A, SearchNext>) {
          search_next(s, a.direction);
        } else if constexpr (std::is_same_v<A, ExportPng>) {
          if (a.path.empty()) return fail(s, "no file name for the PNG");
          s.pending_screenshot = a.path;
        } else if constexpr (std::is_same_v<A, ScreenshotDone>) {
          s.pending_screenshot.clear();
          if (a.ok) {
            info(s, "saved " + a.path);
          } else {
            fail(s, "could not save " + a.path + ": " + a.error);
          }
        } else if constexpr (std::is_same_v<A, ClearMessage>) {
          s.message = {};
        } else if constexpr (std::is_same_v<A, Suggest>) {
          suggest(s, a);
        } else if constexpr (std::is_same_v<A, ApplySuggestion>) {
          apply_suggestion(s, a);
        } else if constexpr (std::is_same_v<A, Reveal>) {
          if (!s.current) return fail(s, "open a run first");
          int64_t e = a.event;
          if (a.rank > 0) {
            std::vector<uint32_t> longest = longest_events(s.current->trace, static_cast<size_t>(a.rank));
            if (longest.size() < static_cast<size_t>(a.rank)) return fail(s, fmt::format("the run has fewer than {} events", a.rank));
            e = longest.back();
          }
          if (e < 0 || static_cast<size_t>(e) >= s.current->trace.events.size()) return;
          s.selected = e;
          reveal(s, e);
          if (a.details) request_tab(s, "details");
        } else if constexpr (std::is_same_v<A, SetRange>) {
          set_range(s, a);
        } else if constexpr (std::is_same_v<A, ClearRange>) {
          clear_range(s);
        } else if constexpr (std::is_same_v<A, SearchLongest>) {
          search_longest(s);
        } else if constexpr (std::is_same_v<A, ShowTab>) {
          request_tab(s, a.tab);
        }
      },
      action);
}

void wait_for_job(AppState& state) {
  // A finished rerun starts loading its run, and a loaded run its statistics: wait for all.
  while (state.busy() || state.stats_pending() || !state.cancelled_reruns.empty()) {
    for (auto& f : state.cancelled_reruns) f.wait();
    if (state.job.active && state.job.result.valid()) state.job.result.wait();
    if (state.load.active && state.load.result.valid()) state.load.result.wait();
    if (state.suggest.active && state.suggest.result.valid()) state.suggest.result.wait();
    if (state.current && state.current->stats_pending()) state.current->pending_stats.wait();
    if (state.range_pending()) state.range_job.result.wait();
    for (auto& f : state.stale_ranges) f.wait();
    apply(state, PollJob{});
  }
}

}  // namespace sl::gui
