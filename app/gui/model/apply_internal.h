#pragma once
// Inside apply() (STYLE item 2: detail behind the front door of app_state.h):
// the helpers its files share. apply.cc holds the dispatch, loading, search
// and selection; apply_rerun.cc the reruns; apply_suggest.cc the stream
// assignment search; apply_cancel.cc cancelling reruns. Only those include it.

#include <cstdint>
#include <string>

#include "app/gui/model/app_state.h"

namespace sl::gui::apply_detail {

// The status line: an error, or what just happened.
void fail(AppState& s, std::string text);
void info(AppState& s, std::string text);

// Re-reads the runs list of the open database.
void refresh_runs(AppState& s);
// Starts loading `run_id` on a worker (as the current run, or the baseline).
void start_load(AppState& s, int64_t run_id, bool baseline);

// An integer member of a run's config JSON; 0 when absent.
int64_t config_int(const std::string& config_json, const char* key);
// The simulator's device model for reruns and suggestions of `source`.
std::string sim_device_of(const trace::RunInfo& source);
// Why the current run cannot be rerun now; empty when it can.
std::string rerun_blocker(const AppState& s);
// Starts a rerun of the current run's program on a worker.
void start_rerun(AppState& s, const std::string& backend, sched::StreamOverrides overrides, int comm_sms,
                 const std::string& device_model);

void rerun(AppState& s, const Rerun& a);
void finish_rerun(AppState& s);  // once the rerun's worker is done: load its run
void suggest(AppState& s, const Suggest& a);
void finish_suggest(AppState& s);
void apply_suggestion(AppState& s, const ApplySuggestion& a);
void cancel_rerun(AppState& s);
void poll_cancelled(AppState& s);  // collects cancelled reruns' workers once they end

}  // namespace sl::gui::apply_detail
