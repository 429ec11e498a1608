// Runs in the open database: click to open, "vs" to compare with the open run.

#include <filesystem>

#include <fmt/format.h>
#include <imgui.h>

#include "app/gui/layout/ruler.h"
#include "app/gui/views/views.h"

namespace sl::gui {

void show_runs_panel(const AppState& state, ActionQueue& out) {
  if (!state.store) {
    ImGui::TextDisabled("no database open");
    return;
  }
  // The button first and the file's name alone: a narrow panel cut the button off.
  if (ImGui::SmallButton("refresh")) out.push_back(RefreshRuns{});
  ImGui::SameLine();
  const std::string file = std::filesystem::path(state.db_path).filename().string();
  ImGui::Text("%zu run%s in %s", state.runs.size(), state.runs.size() == 1 ? "" : "s", file.c_str());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", state.db_path.c_str());
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_SizingFixedFit;
  // 13 px is the unscaled font: the table grows with --font-scale.
  if (!ImGui::BeginTable("runs", 6, flags, ImVec2(0, 170 * ImGui::GetFontSize() / 13))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("run");
  ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch);
  // Its own column: the name ends "(rerun of #N)", which a narrow panel cuts off.
  ImGui::TableSetupColumn("of");
  ImGui::TableSetupColumn("backend");
  ImGui::TableSetupColumn("makespan");
  ImGui::TableSetupColumn("");
  ImGui::TableHeadersRow();
  const int64_t current = state.current ? state.current->info.id : 0;
  const int64_t baseline = state.baseline ? state.baseline->info.id : 0;
  for (const trace::RunInfo& run : state.runs) {
    ImGui::PushID(static_cast<int>(run.id));
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    std::string label = fmt::format("{}{}", run.id, run.id == current ? " *" : run.id == baseline ? " b" : "");
    if (ImGui::Selectable(label.c_str(), run.id == current, ImGuiSelectableFlags_SpanAllColumns |
                                                                ImGuiSelectableFlags_AllowItemOverlap)) {
      out.push_back(OpenRun{run.id});
    }
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("%s\nprogram %s\n%s on %s, %lld device(s)\n%s, %lld events\ncreated %s", run.name.c_str(),
                        run.program_name.c_str(), run.backend.c_str(), run.device_model.c_str(),
                        static_cast<long long>(run.num_devices), trace::run_status_name(run.status),
                        static_cast<long long>(run.event_count), run.created_at.c_str());
    }
    ImGui::TableSetColumnIndex(1);
    ImGui::TextUnformatted(run.name.c_str());
    ImGui::TableSetColumnIndex(2);
    if (const int64_t source = rerun_source(run); source > 0) {
      ImGui::Text("#%lld", static_cast<long long>(source));
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("a rerun of run %lld", static_cast<long long>(source));
    }
    ImGui::TableSetColumnIndex(3);
    if (run.status == trace::RunStatus::kComplete) {
      ImGui::TextUnformatted(run.backend.c_str());
    } else {
      // Coloured rather than spelt out: "(interrupted)" would squeeze the name column to nothing.
      const ImVec4 colour = run.status == trace::RunStatus::kRunning ? ImVec4(0.9f, 0.8f, 0.4f, 1.0f)
                            : run.status == trace::RunStatus::kFailed ? ImVec4(1.0f, 0.4f, 0.4f, 1.0f)
                                                                      : ImVec4(1.0f, 0.6f, 0.3f, 1.0f);
      ImGui::TextColored(colour, "%s!", run.backend.c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", trace::run_status_name(run.status));
    }
    ImGui::TableSetColumnIndex(4);
    if (run.status == trace::RunStatus::kComplete) {
      ImGui::TextUnformatted(format_duration(run.makespan_ns).c_str());
    } else {
      ImGui::TextDisabled("-");
    }
    ImGui::TableSetColumnIndex(5);
    ImGui::BeginDisabled(current == 0 || run.id == current);
    if (ImGui::SmallButton("vs")) out.push_back(Compare{run.id});
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
      ImGui::SetTooltip("compare the open run (current) with this one (baseline)");
    }
    ImGui::PopID();
  }
  ImGui::EndTable();
}

}  // namespace sl::gui
