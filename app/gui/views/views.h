#pragma once
// ImGui views (STYLE item 7): each reads the AppState and the layout draw
// lists and pushes Actions; none changes the model. The frame loop applies
// the queued actions after the frame is drawn (as Dear ImGui's demo defers
// its document closes).

#include <cstdint>
#include <string>
#include <vector>

#include "app/gui/model/action.h"
#include "app/gui/layout/kernel_table.h"
#include "app/gui/model/app_state.h"

namespace sl::gui {

// View-only state: text buffers, drag gestures, what the mouse is over.
struct UiState {
  char db_path[1024] = {};
  char png_path[1024] = "streamlens.png";
  char search[256] = {};
  bool range_dragging = false;   // right-drag (zoom to) or shift-drag (measure) a range
  bool range_measure = false;    // the drag measures (SetRange) instead of zooming
  float range_x0 = 0;            // where it started, relative to the track area
  bool measure_anchor_set = false;  // a first shift-click waits for its second
  int64_t measure_anchor_ns = 0;
  int64_t tab_generation = 0;    // the last AppState::tab_request acted on
  int kernel_sort_column = 2;    // Statistics: KernelColumn of the kernel table (total)
  bool kernel_sort_ascending = false;
  std::string kernel_rows_key;   // which table (run, range, column, order) kernel_rows is a sorted copy of
  std::vector<KernelRow> kernel_rows;  // the sorted copy shown
  bool panning = false;
  double pan_residual_ns = 0;    // sub-nanosecond remainder of drag panning
  bool quit_requested = false;   // File > Quit, Ctrl+Q
  // Splitter positions (pixels, before scaling to the window); a negative
  // value means "not set yet": the first frame picks one that fits.
  float left_width = -1;
  float bottom_height = -1;
  float scale = 1;               // font and DPI scale (--font-scale x the monitor's content scale)
  int64_t compare_tab_for = 0;   // baseline run the compare tab was last brought forward for
  bool headless = false;         // no keyboard shortcuts, fixed layout
  std::string last_hover;        // for tests: the last tooltip's first line
};

using ActionQueue = std::vector<Action>;

void show_main_window(const AppState& state, UiState& ui, ActionQueue& out);

// Pieces of the main window (each draws inside the current window/child).
void show_menu_bar(const AppState& state, UiState& ui, ActionQueue& out);
void show_runs_panel(const AppState& state, ActionQueue& out);
void show_program_panel(const AppState& state, UiState& ui, ActionQueue& out);
void show_timeline(const AppState& state, UiState& ui, ActionQueue& out);
void show_details(const AppState& state, ActionQueue& out);
void show_statistics(const AppState& state, UiState& ui, ActionQueue& out);
void show_compare(const AppState& state, ActionQueue& out);

// Shared formatting helpers.
std::string stream_name(int stream);
std::string stream_name(int stream, trace::StreamKind kind);  // an event's stream, by its own kind
// "812 TFLOP/s" or "1.2 TB/s"; empty if unknown.
std::string event_rate(int64_t duration_ns, const trace::TraceStore::EventExtras& extras);
std::string format_bytes(int64_t bytes);

}  // namespace sl::gui
