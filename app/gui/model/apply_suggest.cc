// apply()'s stream assignment search: Suggest on a worker, its outcome, and
// applying one of its candidates as a simulator rerun.

#include <chrono>
#include <future>
#include <string>

#include <fmt/format.h>

#include "app/common/kernel_times.h"
#include "app/gui/model/app_state.h"
#include "app/gui/model/apply_internal.h"

namespace sl::gui::apply_detail {

void suggest(AppState& s, const Suggest& a) {
  if (s.suggest.active) return fail(s, "a search is already running");
  if (!s.current) return fail(s, "open a run first");
  if (s.current->program_text.empty()) return fail(s, "this run has no program text (imported or captured): nothing to search");
  if (!s.services.suggest) return fail(s, "suggestions are not available");
  if (a.budget < 1) return fail(s, "the search budget must be >= 1");
  SuggestRequest request;
  const auto& source = s.current->info;
  request.source_run = source.id;
  request.program_text = s.current->program_text;
  request.program_name = source.program_name;
  request.device_model = sim_device_of(source);
  request.replicas = config_int(source.config_json, "replicas");
  request.partitions = config_int(source.config_json, "partitions");
  request.budget = a.budget;
  // A linked capture (or a simulation costed by one): searched on its kernel times.
  request.db_path = s.db_path;
  request.kernel_times_run = app::kernel_times_source(source).run;
  for (const auto& e : s.current->streams) {
    if (e.overridden) request.saved_overrides.push_back(e.instruction);
  }
  s.suggestions.reset();
  s.suggest = SuggestJob{};
  s.suggest.active = true;
  s.suggest.source_run = source.id;
  s.suggest.progress = std::make_shared<JobProgress>();
  s.suggest.started = std::chrono::steady_clock::now();
  s.suggest.result = std::async(std::launch::async, [fn = s.services.suggest, request, progress = s.suggest.progress] {
    return fn(request, *progress);
  });
  info(s, fmt::format("searching stream assignments for run {} on the {} model...", source.id, request.device_model));
}

void finish_suggest(AppState& s) {
  if (!s.suggest.active) return;
  if (s.suggest.result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  Result<SuggestOutcome> outcome = s.suggest.result.get();
  const int64_t source = s.suggest.source_run;
  s.suggest = SuggestJob{};
  if (!outcome) return fail(s, fmt::format("suggest for run {} failed: {}", source, outcome.status().message()));
  s.suggestions = std::move(outcome).value();
  const SuggestOutcome& o = *s.suggestions;
  if (o.candidates.empty() || o.candidates.front().makespan_ns >= o.original_makespan_ns) {
    return info(s, fmt::format("{} simulations: nothing beats run {}'s program ({:.1f} us predicted)", o.simulations,
                               source, static_cast<double>(o.original_makespan_ns) / 1e3));
  }
  const Suggestion& best = o.candidates.front();
  info(s, fmt::format("{} simulations: best {:.1f} us predicted against {:.1f} us ({:+.1f}%): {}", o.simulations,
                      static_cast<double>(best.makespan_ns) / 1e3, static_cast<double>(o.original_makespan_ns) / 1e3,
                      100.0 * static_cast<double>(best.makespan_ns - o.original_makespan_ns) /
                          static_cast<double>(o.original_makespan_ns),
                      suggestion_flags(best)));
}

void apply_suggestion(AppState& s, const ApplySuggestion& a) {
  if (!s.suggestions) return fail(s, s.suggest.active ? "the search is still running" : "no suggestions yet: Suggest first");
  const SuggestOutcome& o = *s.suggestions;
  if (!s.current || s.current->info.id != o.source_run) {
    return fail(s, fmt::format("the suggestions are for run {}: open it first", o.source_run));
  }
  if (a.index < 1 || a.index > static_cast<int>(o.candidates.size())) {
    return fail(s, fmt::format("no suggestion {} (there are {})", a.index, o.candidates.size()));
  }
  if (std::string why = rerun_blocker(s); !why.empty()) return fail(s, why);
  const Suggestion& chosen = o.candidates[static_cast<size_t>(a.index - 1)];
  // Exactly the suggestion: the run's own overrides it does not name go back to the program's streams.
  s.edits = chosen.overrides;
  for (const auto& [name, stream] : o.program_streams) s.edits.emplace(name, stream);
  start_rerun(s, "sim", rerun_overrides(s), chosen.comm_sms, o.device_model);
  if (s.job.active) s.compare_after_load = o.source_run;
}

}  // namespace sl::gui::apply_detail
