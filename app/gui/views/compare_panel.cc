// Compare: makespans of baseline and current, and the per-instruction deltas
// sorted by size (click a row to select the current run's event).

#include <fmt/format.h>
#include <imgui.h>

#include "app/gui/layout/ruler.h"
#include "app/gui/views/views.h"

namespace sl::gui {
namespace {

std::string signed_duration(int64_t ns) { return (ns > 0 ? "+" : "") + format_duration(ns); }

// Slower is red, faster green, unchanged (below the noise threshold) grey.
ImVec4 delta_color(int64_t delta_ns, bool changed) {
  if (!changed || delta_ns == 0) return ImVec4(0.65f, 0.65f, 0.68f, 1);
  return delta_ns > 0 ? ImVec4(1.0f, 0.45f, 0.4f, 1) : ImVec4(0.45f, 0.9f, 0.45f, 1);
}

}  // namespace

void show_compare(const AppState& state, ActionQueue& out) {
  if (!state.comparing()) {
    ImGui::TextDisabled("press \"vs\" next to a run to compare the open run with it");
    return;
  }
  const Comparison& c = *state.comparison;
  const trace::Comparison& s = c.summary;
  const int64_t delta = s.makespan_delta_ns();
  ImGui::Text("baseline run %lld: %s    current run %lld: %s    delta",
              static_cast<long long>(state.baseline->info.id), format_duration(s.a.makespan_ns).c_str(),
              static_cast<long long>(state.current->info.id), format_duration(s.b.makespan_ns).c_str());
  ImGui::SameLine();
  ImGui::TextColored(delta_color(delta, true), "%s (%+.1f%%)", signed_duration(delta).c_str(),
                     s.a.makespan_ns > 0 ? 100.0 * static_cast<double>(delta) / static_cast<double>(s.a.makespan_ns) : 0.0);
  ImGui::SameLine();
  if (ImGui::SmallButton("close")) out.push_back(CloseCompare{});
  ImGui::Text("%lld matched, %lld only in baseline, %lld only in current; %lld changed (outlined in the timeline)",
              static_cast<long long>(s.matched), static_cast<long long>(s.only_in_a),
              static_cast<long long>(s.only_in_b), static_cast<long long>(c.changed_count));
  if (std::string why = programs_differ(c); !why.empty()) ImGui::TextColored(ImVec4(1, 0.6f, 0.2f, 1), "warning: %s", why.c_str());
  ImGui::Text("overlap: baseline %.0f%%, current %.0f%%   critical path: baseline %s, current %s",
              s.a.overlap.ratio * 100, s.b.overlap.ratio * 100,
              format_duration(s.a.critical_path.length_ns()).c_str(),
              format_duration(s.b.critical_path.length_ns()).c_str());

  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("deltas", 7, flags, ImVec2(0, 0))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("instruction", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("device");
  ImGui::TableSetupColumn("stream");
  ImGui::TableSetupColumn("baseline");
  ImGui::TableSetupColumn("new");
  ImGui::TableSetupColumn("delta");
  ImGui::TableSetupColumn("start delta");
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(s.deltas.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const auto row = static_cast<size_t>(i);
      const trace::InstructionDelta& d = s.deltas[row];
      const int64_t current_event = c.current_event[row];
      ImGui::PushID(i);
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      std::string name = d.occurrence > 0 ? fmt::format("{} #{}", d.instruction, d.occurrence) : d.instruction;
      if (c.changed[row]) name += " *";
      if (ImGui::Selectable(name.c_str(), current_event >= 0 && current_event == state.selected,
                            ImGuiSelectableFlags_SpanAllColumns) &&
          current_event >= 0) {
        out.push_back(Reveal{current_event, 0, false});  // into view, the deltas stay in front
      }
      ImGui::TableSetColumnIndex(1);
      ImGui::Text("%d", d.device);
      ImGui::TableSetColumnIndex(2);
      if (!d.in_a) {
        ImGui::Text("new on %s", stream_name(d.stream_b).c_str());
      } else if (!d.in_b) {
        ImGui::Text("gone from %s", stream_name(d.stream_a).c_str());
      } else if (d.stream_a != d.stream_b) {
        ImGui::Text("%s -> %s", stream_name(d.stream_a).c_str(), stream_name(d.stream_b).c_str());
      } else {
        ImGui::TextUnformatted(stream_name(d.stream_b).c_str());
      }
      ImGui::TableSetColumnIndex(3);
      ImGui::TextUnformatted(d.in_a ? format_duration(d.duration_a_ns).c_str() : "-");
      ImGui::TableSetColumnIndex(4);
      ImGui::TextUnformatted(d.in_b ? format_duration(d.duration_b_ns).c_str() : "-");
      ImGui::TableSetColumnIndex(5);
      if (d.matched()) {
        ImGui::TextColored(delta_color(d.duration_delta_ns(), c.changed[row] != 0), "%s",
                           signed_duration(d.duration_delta_ns()).c_str());
      } else {
        ImGui::TextUnformatted("-");
      }
      ImGui::TableSetColumnIndex(6);
      ImGui::TextUnformatted(d.matched() ? signed_duration(d.start_delta_ns()).c_str() : "-");
      ImGui::PopID();
    }
  }
  ImGui::EndTable();
}

}  // namespace sl::gui
