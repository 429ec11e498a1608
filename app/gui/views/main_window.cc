// The one full-window layout: menu bar, toolbar (search, fit, message), runs
// and program on the left, timeline on the right, tabs below it.

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <imgui.h>

#include "app/gui/layout/ruler.h"
#include "app/gui/layout/timeline_layout.h"
#include "app/gui/layout/timeline_metrics.h"
#include "app/gui/model/app_state.h"
#include "app/gui/views/views.h"

namespace sl::gui {
namespace {

// Preferred panel sizes at scale 1; smaller windows give them a fraction.
constexpr float kLeftWidth = 380;
constexpr float kBottomHeight = 250;

// A draggable gap `thickness` wide: horizontal drags move `size` (a width), vertical ones a height.
void splitter(const char* id, bool vertical, float thickness, float* size, float min_size, float max_size,
              float length) {
  ImGui::InvisibleButton(id, vertical ? ImVec2(thickness, length) : ImVec2(length, thickness));
  if (ImGui::IsItemActive() || ImGui::IsItemHovered()) {
    ImGui::SetMouseCursor(vertical ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
  }
  if (ImGui::IsItemActive()) *size += vertical ? ImGui::GetIO().MouseDelta.x : -ImGui::GetIO().MouseDelta.y;
  *size = std::clamp(*size, min_size, std::max(min_size, max_size));
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  const ImU32 colour = ImGui::GetColorU32(ImGui::IsItemActive() ? ImGuiCol_SeparatorActive
                                          : ImGui::IsItemHovered() ? ImGuiCol_SeparatorHovered
                                                                   : ImGuiCol_Separator);
  if (vertical) {
    ImGui::GetWindowDrawList()->AddLine(ImVec2((a.x + b.x) / 2, a.y), ImVec2((a.x + b.x) / 2, b.y), colour);
  } else {
    ImGui::GetWindowDrawList()->AddLine(ImVec2(a.x, (a.y + b.y) / 2), ImVec2(b.x, (a.y + b.y) / 2), colour);
  }
}

// Keyboard focus in a dialog's text field when it opens, so typing and Enter work at once.
void focus_on_open() {
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
}

void copy_to(char* dst, size_t size, const std::string& src) {
  std::strncpy(dst, src.c_str(), size - 1);
  dst[size - 1] = '\0';
}

void toolbar(const AppState& state, UiState& ui, ActionQueue& out) {
  ImGui::SetNextItemWidth(timeline_metrics(ui.scale).search_width);
  if (ImGui::InputTextWithHint("##search", "search instruction / kernel", ui.search, sizeof(ui.search),
                               ImGuiInputTextFlags_EnterReturnsTrue)) {
    if (ui.search != state.search_text) out.push_back(Search{ui.search});
    out.push_back(SearchNext{1});
  }
  ImGui::SameLine();
  if (ImGui::Button("<")) out.push_back(SearchNext{-1});
  ImGui::SameLine();
  if (ImGui::Button(">")) out.push_back(SearchNext{1});
  if (!state.search_text.empty()) {
    ImGui::SameLine();
    if (state.search_cursor >= 0) {
      ImGui::Text("%lld/%zu", static_cast<long long>(state.search_cursor + 1), state.search_hits.size());
    } else {
      ImGui::Text("%zu hits", state.search_hits.size());
    }
  }
  if (state.search_hits.size() > 1) {
    ImGui::SameLine();
    if (ImGui::Button("longest")) out.push_back(SearchLongest{});
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("jump to the longest hit; < and > then go by duration");
  }
  ImGui::SameLine();
  if (ImGui::Button("Fit")) out.push_back(FitAll{});
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("fit the whole run (F, or double-click the timeline)");
  ImGui::SameLine();
  if (ImGui::Button("+")) out.push_back(ZoomAt{0.5, state.viewport.start_ns + state.viewport.span_ns() / 2});
  ImGui::SameLine();
  if (ImGui::Button("-")) out.push_back(ZoomAt{2.0, state.viewport.start_ns + state.viewport.span_ns() / 2});
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("wheel: zoom at the cursor; drag: pan; right- or shift-drag: zoom to a range;\n"
                      "W/S or Up/Down: zoom; A/D or Left/Right: pan; double-click or F: fit");
  }
  if (state.comparing()) {
    // The compare loop's one number: how much the makespan moved.
    const int64_t delta = state.comparison->summary.makespan_delta_ns();
    ImGui::SameLine();
    ImGui::TextColored(delta > 0 ? ImVec4(1.0f, 0.45f, 0.4f, 1) : ImVec4(0.45f, 0.9f, 0.45f, 1),
                       "makespan %s%s vs run %lld", delta > 0 ? "+" : "", format_duration(delta).c_str(),
                       static_cast<long long>(state.baseline->info.id));
  }
  if (!state.message.text.empty()) {
    ImGui::SameLine();
    ImVec4 color = state.message.error ? ImVec4(1.0f, 0.4f, 0.4f, 1.0f) : ImVec4(0.6f, 0.9f, 0.6f, 1.0f);
    // Shortened in the middle to what fits before its "x" (a narrow window
    // cut the end and the button off); the whole text is in the tooltip.
    const ImGuiStyle& style = ImGui::GetStyle();
    const float button_w = ImGui::CalcTextSize("x").x + 2 * style.FramePadding.x + style.ItemSpacing.x;
    LayoutOptions fit;
    fit.char_px = ImGui::CalcTextSize("M").x;
    fit.label_pad_px = 0;
    bool cut = false;
    const uint16_t chars = fit_label(state.message.text.size(), ImGui::GetContentRegionAvail().x - button_w, fit, &cut);
    const std::string shown = cut ? shorten_middle(state.message.text, chars) : state.message.text;
    ImGui::TextColored(color, "%s", shown.c_str());
    if (cut && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", state.message.text.c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("x")) out.push_back(ClearMessage{});
  }
}

void program_text_tab(const AppState& state) {
  if (!state.current || state.current->program_text.empty()) {
    ImGui::TextDisabled("no program text stored with this run");
    return;
  }
  ImGui::BeginChild("program_text", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::TextUnformatted(state.current->program_text.c_str());
  ImGui::EndChild();
}

}  // namespace

void show_menu_bar(const AppState& state, UiState& ui, ActionQueue& out) {
  if (!ImGui::BeginMenuBar()) return;
  bool open_db = false, export_png = false;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open database...")) open_db = true;
    if (ImGui::BeginMenu("Recent databases", !state.recent_files.empty())) {
      for (const std::string& path : state.recent_files) {
        if (ImGui::MenuItem(path.c_str())) out.push_back(OpenDatabase{path});
      }
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Export PNG...", nullptr, false, state.has_run())) export_png = true;
    ImGui::Separator();
    if (ImGui::MenuItem("Quit")) ui.quit_requested = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    if (ImGui::MenuItem("Fit all", "F")) out.push_back(FitAll{});
    if (ImGui::MenuItem("Close compare", nullptr, false, state.comparing())) out.push_back(CloseCompare{});
    ImGui::EndMenu();
  }
  if (state.current) {
    ImGui::TextDisabled("run %lld: %s (%s, %s)", static_cast<long long>(state.current->info.id),
                        state.current->info.name.c_str(), state.current->info.backend.c_str(),
                        state.current->info.device_model.c_str());
  }
  ImGui::EndMenuBar();

  if (ImGui::IsKeyPressed('Q') && ImGui::GetIO().KeyCtrl) ui.quit_requested = true;
  if (open_db) {
    copy_to(ui.db_path, sizeof(ui.db_path), state.db_path);
    ImGui::OpenPopup("Open database");
  }
  if (export_png) {
    // Shown absolute: a relative name is saved beside the database, not in the working directory.
    copy_to(ui.png_path, sizeof(ui.png_path), export_path(state.db_path, ui.png_path));
    ImGui::OpenPopup("Export PNG");
  }
  if (ImGui::BeginPopupModal("Open database", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::TextUnformatted("streamlens database (.db):");
    ImGui::SetNextItemWidth(480 * ui.scale);
    focus_on_open();
    bool enter = ImGui::InputText("##path", ui.db_path, sizeof(ui.db_path), ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::Button("Open") || enter) {
      out.push_back(OpenDatabase{ui.db_path});
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  if (ImGui::BeginPopupModal("Export PNG", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::TextUnformatted("save the window as a PNG:");
    ImGui::SetNextItemWidth(480 * ui.scale);
    focus_on_open();
    bool enter = ImGui::InputText("##png", ui.png_path, sizeof(ui.png_path), ImGuiInputTextFlags_EnterReturnsTrue);
    const std::string target = export_path(state.db_path, ui.png_path);
    ImGui::TextDisabled("saves to %s", target.c_str());
    if (ImGui::Button("Save") || enter) {
      out.push_back(ExportPng{target});
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

void show_main_window(const AppState& state, UiState& ui, ActionQueue& out) {
  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->Pos);
  ImGui::SetNextWindowSize(viewport->Size);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_MenuBar |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0);
  ImGui::Begin("streamlens", nullptr, flags);
  ImGui::PopStyleVar();
  show_menu_bar(state, ui, out);
  toolbar(state, ui, out);

  // Panels that fit the window: at 900x600 the timeline keeps most of the width.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const TimelineMetrics m = timeline_metrics(ui.scale);
  if (ui.left_width < 0) ui.left_width = std::min(kLeftWidth * ui.scale, avail.x * 0.3f);
  if (ui.bottom_height < 0) ui.bottom_height = std::min(kBottomHeight * ui.scale, avail.y * 0.35f);
  const float min_panel = 120 * ui.scale;
  ui.left_width = std::clamp(ui.left_width, min_panel, std::max(min_panel, avail.x - 2 * min_panel));
  ui.bottom_height = std::clamp(ui.bottom_height, 60 * ui.scale, std::max(60 * ui.scale, avail.y - min_panel));

  ImGui::BeginChild("left", ImVec2(ui.left_width, 0), true);
  if (ImGui::CollapsingHeader("Runs", ImGuiTreeNodeFlags_DefaultOpen)) show_runs_panel(state, out);
  if (ImGui::CollapsingHeader("Program and streams", ImGuiTreeNodeFlags_DefaultOpen)) {
    show_program_panel(state, ui, out);
  }
  ImGui::EndChild();
  ImGui::SameLine(0, 0);
  splitter("##split_left", true, m.splitter, &ui.left_width, min_panel, avail.x - 2 * min_panel, avail.y);
  ImGui::SameLine(0, 0);

  ImGui::BeginGroup();
  const float right_h = ImGui::GetContentRegionAvail().y;
  const float right_w = ImGui::GetContentRegionAvail().x;
  ImGui::BeginChild("timeline", ImVec2(0, std::max(min_panel, right_h - ui.bottom_height - m.splitter)), true);
  show_timeline(state, ui, out);
  ImGui::EndChild();
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(0, 0));
  splitter("##split_bottom", false, m.splitter, &ui.bottom_height, 60 * ui.scale, right_h - min_panel, right_w);
  ImGui::PopStyleVar();
  ImGui::BeginChild("bottom", ImVec2(0, 0), true, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  // Each tab scrolls in its own child, so the tab bar stays put.
  auto tab_content = [](const char* id) {
    ImGui::BeginChild(id, ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
  };
  // A tab asked for by the model (a statistics row revealed an event: Details).
  auto requested = [&](const char* tab) -> ImGuiTabItemFlags {
    if (state.tab_request.generation == ui.tab_generation || state.tab_request.tab != tab) return 0;
    return ImGuiTabItemFlags_SetSelected;
  };
  const ImGuiTabItemFlags details_flags = requested("details"), stats_flags = requested("statistics"),
                          program_flags = requested("program");
  ImGuiTabItemFlags compare_request = requested("compare");
  ui.tab_generation = state.tab_request.generation;
  if (ImGui::BeginTabBar("tabs")) {
    if (ImGui::BeginTabItem("Details", nullptr, details_flags)) {
      tab_content("details_content");
      show_details(state, out);
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Statistics", nullptr, stats_flags)) {
      tab_content("stats_content");
      show_statistics(state, ui, out);
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    // Open the compare tab by itself when a comparison starts.
    ImGuiTabItemFlags compare_flags = compare_request;
    if (state.comparing() && ui.compare_tab_for != state.baseline->info.id) {
      compare_flags = ImGuiTabItemFlags_SetSelected;
      ui.compare_tab_for = state.baseline->info.id;
    }
    if (ImGui::BeginTabItem("Compare", nullptr, compare_flags)) {
      tab_content("compare_content");
      show_compare(state, out);
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Program text", nullptr, program_flags)) {
      program_text_tab(state);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
  ImGui::EndGroup();
  ImGui::End();
}

}  // namespace sl::gui
