// Statistics of the open run: makespan, busy time per stream, overlap of
// compute and communication, critical path, and a per-kernel table.

#include <fmt/format.h>
#include <imgui.h>

#include "app/gui/layout/ruler.h"
#include "app/gui/views/views.h"

namespace sl::gui {

void show_statistics(const AppState& state, ActionQueue& out) {
  if (!state.current) {
    ImGui::TextDisabled("no run open");
    return;
  }
  const LoadedRun& run = *state.current;
  if (run.stats_pending()) {
    ImGui::Text("%zu events, loaded in %.0f ms; computing statistics...", run.trace.events.size(), run.load_ms);
    return;
  }
  const TraceStats& s = run.stats;
  ImGui::Text("makespan %s   events %lld   loaded in %.0f ms", format_duration(s.makespan_ns).c_str(),
              static_cast<long long>(s.events), run.load_ms);
  for (const trace::DeviceOverlap& d : s.overlap.devices) {
    ImGui::Text("device %d: compute %s, communication %s, overlapped %s (%.0f%% of communication hidden)", d.device,
                format_duration(d.compute_ns).c_str(), format_duration(d.communication_ns).c_str(),
                format_duration(d.overlap_ns).c_str(), d.ratio * 100);
  }
  const trace::CriticalPath& path = s.critical_path;
  ImGui::Text("critical path: %zu events over %s, %s busy", path.events.size(),
              format_duration(path.length_ns()).c_str(), format_duration(path.busy_ns).c_str());
  if (!path.events.empty()) {
    ImGui::SameLine();
    if (ImGui::SmallButton("select its last event")) out.push_back(Select{path.events.back()});
  }
  for (const auto& c : run.trace.counters) {
    ImGui::TextColored(ImVec4(1, 0.7f, 0.3f, 1), "%s: %lld  %s", c.name.c_str(), static_cast<long long>(c.value),
                       c.description.c_str());
  }

  const float half = ImGui::GetContentRegionAvail().x * 0.42f;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("streams", 3, flags, ImVec2(half, 0))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("stream", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("busy");
    ImGui::TableSetupColumn("busy %");
    ImGui::TableHeadersRow();
    for (const trace::StreamBusy& st : s.streams) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(track_label(st.device, st.stream).c_str());
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(format_duration(st.busy_ns).c_str());
      ImGui::TableSetColumnIndex(2);
      ImGui::Text("%.1f", s.busy_fraction(st) * 100);
    }
    ImGui::EndTable();
  }
  ImGui::SameLine();
  if (ImGui::BeginTable("kernels", 5, flags, ImVec2(0, 0))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("kernel", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("count");
    ImGui::TableSetupColumn("total");
    ImGui::TableSetupColumn("mean");
    ImGui::TableSetupColumn("max");
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;  // the table can hold thousands of kernel names
    clipper.Begin(static_cast<int>(s.kernels.size()));
    while (clipper.Step()) {
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        const trace::KernelStats& k = s.kernels[static_cast<size_t>(i)];
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextUnformatted(k.name.c_str());
        ImGui::TableSetColumnIndex(1);
        ImGui::Text("%lld", static_cast<long long>(k.count));
        ImGui::TableSetColumnIndex(2);
        ImGui::TextUnformatted(format_duration(k.total_ns).c_str());
        ImGui::TableSetColumnIndex(3);
        ImGui::TextUnformatted(format_duration(static_cast<int64_t>(k.mean_ns)).c_str());
        ImGui::TableSetColumnIndex(4);
        ImGui::TextUnformatted(format_duration(k.max_ns).c_str());
      }
    }
    ImGui::EndTable();
  }
}

}  // namespace sl::gui
