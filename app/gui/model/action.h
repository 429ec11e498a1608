#pragma once
// Everything that can change the GUI's state, as values (STYLE item 7).
// Buttons, mouse and keyboard handlers and `--script` lines all produce
// these; `apply` (app_state.h) is the only code that carries them out.

#include <cstdint>
#include <string>
#include <variant>

namespace sl::gui {

struct OpenDatabase { std::string path; };
struct RefreshRuns {};
struct OpenRun { int64_t run_id = 0; };
struct Compare { int64_t run_id = 0; };   // the open run becomes "current", this one the baseline
struct CloseCompare {};
// Put an instruction on another stream for the next rerun (kCommStreamBase = communication).
struct SetStream { std::string instruction; int stream = 0; };
struct ClearEdits {};
struct Rerun { std::string backend; };     // sim | cpu | cuda
struct CancelRerun {};                     // stop the running rerun; its run is marked interrupted
struct PollJob {};                         // once a frame: pick up a finished rerun
struct ZoomTo { int64_t start_ns = 0; int64_t end_ns = 0; };
struct ZoomAt { double factor = 1; int64_t anchor_ns = 0; };  // factor < 1 zooms in
struct Pan { int64_t delta_ns = 0; };
struct FitAll {};
struct Select { int64_t event = -1; };     // index into the current trace; -1 clears
struct SelectInstruction { std::string name; };
struct Search { std::string text; };
struct SearchNext { int direction = 1; };
struct ExportPng { std::string path; };    // the frame loop writes the next frame to `path`
struct ScreenshotDone { std::string path; bool ok = true; std::string error; };
struct ClearMessage {};
// Search stream assignments for the open run's program with the simulator (a worker job).
struct Suggest { int64_t budget = 2000; };
// Rerun on the simulator with suggestion `index` (1 = the best) and compare with the run it came from.
struct ApplySuggestion { int index = 1; };
// Select an event, bring it into view and show the Details tab (statistics rows).
// rank > 0: the rank-th longest event instead; details = false keeps the current tab (compare rows).
struct Reveal { int64_t event = -1; int rank = 0; bool details = true; };
// A measured time range (shift-drag, or two shift-clicks): its Δt and statistics stay until cleared.
struct SetRange { int64_t t0_ns = 0; int64_t t1_ns = 0; };
struct ClearRange {};
// Jump to the search's longest hit; further SearchNext steps go by duration, longest first.
struct SearchLongest {};
// Bring a bottom tab forward: "details", "statistics", "compare", "program".
struct ShowTab { std::string tab; };

using Action = std::variant<OpenDatabase, RefreshRuns, OpenRun, Compare, CloseCompare, SetStream, ClearEdits, Rerun,
                            CancelRerun, PollJob, ZoomTo, ZoomAt, Pan, FitAll, Select, SelectInstruction, Search,
                            SearchNext, ExportPng, ScreenshotDone, ClearMessage, Suggest, ApplySuggestion, Reveal,
                            SetRange, ClearRange, SearchLongest, ShowTab>;

// A short human-readable form for logs and tests ("open-run 3").
std::string describe(const Action& action);

}  // namespace sl::gui
