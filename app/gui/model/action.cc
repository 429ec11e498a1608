#include "app/gui/model/action.h"

#include <fmt/format.h>

namespace sl::gui {

std::string describe(const Action& action) {
  return std::visit(
      [](const auto& a) -> std::string {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, OpenDatabase>) return "open-database " + a.path;
        if constexpr (std::is_same_v<A, RefreshRuns>) return "refresh-runs";
        if constexpr (std::is_same_v<A, OpenRun>) return fmt::format("open-run {}", a.run_id);
        if constexpr (std::is_same_v<A, Compare>) return fmt::format("compare {}", a.run_id);
        if constexpr (std::is_same_v<A, CloseCompare>) return "close-compare";
        if constexpr (std::is_same_v<A, SetStream>) return fmt::format("set-stream {} {}", a.instruction, a.stream);
        if constexpr (std::is_same_v<A, ClearEdits>) return "clear-edits";
        if constexpr (std::is_same_v<A, Rerun>) return "rerun " + a.backend;
        if constexpr (std::is_same_v<A, CancelRerun>) return "cancel-rerun";
        if constexpr (std::is_same_v<A, PollJob>) return "poll-job";
        if constexpr (std::is_same_v<A, ZoomTo>) return fmt::format("zoom-ns {} {}", a.start_ns, a.end_ns);
        if constexpr (std::is_same_v<A, ZoomAt>) return fmt::format("zoom-at {} {}", a.factor, a.anchor_ns);
        if constexpr (std::is_same_v<A, Pan>) return fmt::format("pan {}", a.delta_ns);
        if constexpr (std::is_same_v<A, FitAll>) return "fit-all";
        if constexpr (std::is_same_v<A, Select>) return fmt::format("select-event {}", a.event);
        if constexpr (std::is_same_v<A, SelectInstruction>) return "select " + a.name;
        if constexpr (std::is_same_v<A, Search>) return "search " + a.text;
        if constexpr (std::is_same_v<A, SearchNext>) return fmt::format("search-next {}", a.direction);
        if constexpr (std::is_same_v<A, ExportPng>) return "export-png " + a.path;
        if constexpr (std::is_same_v<A, ScreenshotDone>) return "screenshot-done " + a.path;
        if constexpr (std::is_same_v<A, ClearMessage>) return "clear-message";
        if constexpr (std::is_same_v<A, Suggest>) return fmt::format("suggest {}", a.budget);
        if constexpr (std::is_same_v<A, ApplySuggestion>) return fmt::format("apply-suggestion {}", a.index);
        if constexpr (std::is_same_v<A, Reveal>) return fmt::format("reveal-event {}", a.event);
        if constexpr (std::is_same_v<A, SetRange>) return fmt::format("measure-ns {} {}", a.t0_ns, a.t1_ns);
        if constexpr (std::is_same_v<A, ClearRange>) return "clear-measure";
        if constexpr (std::is_same_v<A, SearchLongest>) return "search-longest";
        if constexpr (std::is_same_v<A, ShowTab>) return "tab " + a.tab;
      },
      action);
}

}  // namespace sl::gui
