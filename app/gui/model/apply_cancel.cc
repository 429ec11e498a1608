// apply()'s Cancel for reruns: the window is freed at once, the worker is
// told to stop and collected later, and its run is marked interrupted.

#include <algorithm>
#include <chrono>
#include <future>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "app/gui/model/app_state.h"
#include "app/gui/model/apply_internal.h"

namespace sl::gui {
namespace apply_detail {
namespace {

// Marks the cancelled rerun's run (once it has begun) interrupted in the
// store; the worker's own failure report later keeps that mark.
void mark_cancelled(AppState& s, int64_t run_id) {
  if (run_id <= 0 || !s.store) return;
  (void)s.store->finish_run(run_id, trace::RunStatus::kInterrupted, 0,
                            {{"cancelled", 1, "rerun cancelled in streamlens-gui"}});
}

}  // namespace

void cancel_rerun(AppState& s) {
  if (!s.job.active) return fail(s, "no rerun is running");
  s.job.progress->cancel = true;
  const int64_t run_id = s.job.progress->run_id.load();
  mark_cancelled(s, run_id);
  const std::string backend = s.job.backend;
  const int64_t source = s.job.source_run;
  s.cancelled_reruns.push_back(std::move(s.job.result));
  s.job = RerunJob{};
  s.compare_after_load = 0;
  refresh_runs(s);
  info(s, run_id > 0 ? fmt::format("cancelled the rerun of run {} on {}; run {} is marked interrupted", source,
                                   backend, run_id)
                     : fmt::format("cancelled the rerun of run {} on {}", source, backend));
}

void poll_cancelled(AppState& s) {
  auto& list = s.cancelled_reruns;
  const size_t before = list.size();
  list.erase(std::remove_if(list.begin(), list.end(),
                            [](std::future<Result<int64_t>>& f) {
                              if (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
                              (void)f.get();  // cancelled: whatever it made is not opened
                              return true;
                            }),
             list.end());
  if (list.size() != before) {
    const Message keep = s.message;
    refresh_runs(s);
    if (!s.message.error) s.message = keep;
  }
}

}  // namespace apply_detail

void cancel_for_quit(AppState& state) {
  if (state.job.active) apply_detail::cancel_rerun(state);
}

}  // namespace sl::gui
