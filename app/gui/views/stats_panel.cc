// Statistics of the open run: makespan, busy time per stream, overlap of
// compute and communication, critical path, a sortable per-kernel table and
// the longest individual kernels (click a row: select it, bring it into view,
// open Details), and the same for a measured range (shift-drag).

#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>

#include "app/gui/layout/ruler.h"
#include "app/gui/layout/stats_tables_layout.h"
#include "app/gui/layout/time_format.h"
#include "app/gui/views/views.h"

namespace sl::gui {
namespace {

constexpr ImGuiTableFlags kTableFlags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                        ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit |
                                        ImGuiTableFlags_Resizable;

void summary(const LoadedRun& run, ActionQueue& out) {
  const TraceStats& s = run.stats;
  ImGui::Text("makespan %s   events %lld   loaded in %.0f ms", format_duration(s.makespan_ns).c_str(),
              static_cast<long long>(s.events), run.load_ms);
  if (!s.steps.empty()) {
    ImGui::SameLine();
    ImGui::Text("  %zu steps", s.steps.size());
  }
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
    if (ImGui::SmallButton("show its last event")) out.push_back(Reveal{path.events.back()});
  }
  // Counters (odd or dropped records, link results) fold away: a linked capture has a dozen.
  if (!run.trace.counters.empty() &&
      ImGui::TreeNode("counters", "%zu counters of the import / run", run.trace.counters.size())) {
    for (const auto& c : run.trace.counters) {
      ImGui::TextColored(ImVec4(1, 0.7f, 0.3f, 1), "%s: %lld  %s", c.name.c_str(), static_cast<long long>(c.value),
                         c.description.c_str());
    }
    ImGui::TreePop();
  }
}

void streams_table(const TraceStats& s, float width, float height) {
  if (!ImGui::BeginTable("streams", 3, kTableFlags, ImVec2(width, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("stream", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("busy");
  ImGui::TableSetupColumn("busy %");
  ImGui::TableHeadersRow();
  for (const trace::StreamBusy& st : s.streams) {
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::TextUnformatted(track_label(st.device, st.stream, st.stream_kind).c_str());
    ImGui::TableSetColumnIndex(1);
    ImGui::TextUnformatted(format_duration(st.busy_ns).c_str());
    ImGui::TableSetColumnIndex(2);
    ImGui::Text("%.1f", s.busy_fraction(st) * 100);
  }
  ImGui::EndTable();
}

// The kernel table, sorted by the clicked header; `key` names the source
// rows so the sorted copy in `ui` is redone only when they or the order change.
void kernel_table_view(const std::vector<KernelRow>& source, const std::string& key, UiState& ui, ActionQueue& out,
                       float width, float height) {
  static const char* const kHeaders[] = {"kernel", "count", "total", "%", "mean", "median", "min", "max"};
  if (!ImGui::BeginTable("kernels", 8, kTableFlags | ImGuiTableFlags_Sortable, ImVec2(width, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (int c = 0; c < 8; ++c) {
    ImGuiTableColumnFlags f = c == 0 ? ImGuiTableColumnFlags_WidthStretch : ImGuiTableColumnFlags_PreferSortDescending;
    if (c == 2) f |= ImGuiTableColumnFlags_DefaultSort;
    ImGui::TableSetupColumn(kHeaders[c], f, 0, static_cast<ImGuiID>(c));
  }
  ImGui::TableHeadersRow();
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs != nullptr && specs->SpecsCount > 0) {
    ui.kernel_sort_column = static_cast<int>(specs->Specs[0].ColumnUserID);
    ui.kernel_sort_ascending = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
    specs->SpecsDirty = false;
  }
  const std::string full_key = fmt::format("{}/{}/{}", key, ui.kernel_sort_column, ui.kernel_sort_ascending);
  if (full_key != ui.kernel_rows_key) {
    ui.kernel_rows = source;
    sort_kernel_rows(ui.kernel_rows, static_cast<KernelColumn>(ui.kernel_sort_column), ui.kernel_sort_ascending);
    ui.kernel_rows_key = full_key;
  }
  ImGuiListClipper clipper;  // the table can hold thousands of kernel names
  clipper.Begin(static_cast<int>(ui.kernel_rows.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const KernelRow& k = ui.kernel_rows[static_cast<size_t>(i)];
      ImGui::PushID(i);
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      if (ImGui::Selectable(k.name.c_str(), false, ImGuiSelectableFlags_SpanAllColumns)) {
        out.push_back(Reveal{k.longest_event});
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\nclick: show its longest call", k.name.c_str());
      ImGui::TableSetColumnIndex(1);
      ImGui::Text("%lld", static_cast<long long>(k.count));
      ImGui::TableSetColumnIndex(2);
      ImGui::TextUnformatted(format_duration(k.total_ns).c_str());
      ImGui::TableSetColumnIndex(3);
      ImGui::Text("%.1f", k.share * 100);
      ImGui::TableSetColumnIndex(4);
      ImGui::TextUnformatted(format_duration(static_cast<int64_t>(k.mean_ns)).c_str());
      ImGui::TableSetColumnIndex(5);
      ImGui::TextUnformatted(format_duration(k.median_ns).c_str());
      ImGui::TableSetColumnIndex(6);
      ImGui::TextUnformatted(format_duration(k.min_ns).c_str());
      ImGui::TableSetColumnIndex(7);
      ImGui::TextUnformatted(format_duration(k.max_ns).c_str());
      ImGui::PopID();
    }
  }
  ImGui::EndTable();
}

void longest_view(const trace::CompactTrace& t, const std::vector<uint32_t>& longest, int64_t selected, ActionQueue& out,
                  float width, float height) {
  if (!ImGui::BeginTable("longest", 4, kTableFlags, ImVec2(width, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("longest kernels", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("duration");
  ImGui::TableSetupColumn("start");
  ImGui::TableSetupColumn("stream");
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(longest.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const uint32_t e = longest[static_cast<size_t>(i)];
      const trace::EventRef& ev = t.events[e];
      ImGui::PushID(i);
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      std::string label = fmt::format("{}. {}", i + 1, t.name_of(ev));
      if (ImGui::Selectable(label.c_str(), static_cast<int64_t>(e) == selected, ImGuiSelectableFlags_SpanAllColumns)) {
        out.push_back(Reveal{e});
      }
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(format_duration(ev.duration_ns()).c_str());
      ImGui::TableSetColumnIndex(2);
      ImGui::TextUnformatted(format_time_us(ev.start_ns).c_str());
      ImGui::TableSetColumnIndex(3);
      ImGui::Text("dev %d %s", ev.device, stream_name(ev.stream, ev.stream_kind).c_str());
      ImGui::PopID();
    }
  }
  ImGui::EndTable();
}

}  // namespace

void show_statistics(const AppState& state, UiState& ui, ActionQueue& out) {
  if (!state.current) {
    ImGui::TextDisabled("no run open");
    return;
  }
  const LoadedRun& run = *state.current;
  if (run.stats_pending()) {
    ImGui::Text("%zu events, loaded in %.0f ms; computing statistics...", run.trace.events.size(), run.load_ms);
    return;
  }
  const std::vector<KernelRow>* rows = &run.stats.kernel_rows;
  const std::vector<uint32_t>* longest = &run.stats.longest;
  std::string key = fmt::format("run{}", run.info.id);
  if (state.range) {
    const RangeStats& r = *state.range;
    ImGui::TextColored(ImVec4(1, 0.83f, 0.43f, 1), "range %s .. %s: dt %s, %lld events starting in it, %s busy",
                       format_time_exact(r.t0).c_str(), format_time_exact(r.t1).c_str(),
                       format_duration_exact(r.t1 - r.t0).c_str(), static_cast<long long>(r.events),
                       format_duration(r.busy_ns).c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("clear range")) out.push_back(ClearRange{});
    if (state.range_pending()) {
      ImGui::TextDisabled("computing the range's statistics...");
      return;
    }
    rows = &r.kernels;
    longest = &r.longest;
    key = fmt::format("run{}/range{}-{}", run.info.id, r.t0, r.t1);
  } else {
    summary(run, out);
    ImGui::TextDisabled("shift-drag in the timeline to measure a range and see its statistics here");
  }
  const StatsTablesLayout l = stats_tables_layout(ImGui::GetContentRegionAvail().x, ui.scale, !state.range);
  // Stacked, each table gets a few rows of its own and the tab scrolls.
  const float row = ImGui::GetTextLineHeightWithSpacing();
  auto rows_of = [&](size_t n, size_t most) { return row * static_cast<float>(std::min(n, most) + 2); };
  if (!state.range) {
    streams_table(run.stats, l.streams_width, l.stacked ? rows_of(run.stats.streams.size(), 6) : 0);
    if (!l.stacked) ImGui::SameLine();
  }
  kernel_table_view(*rows, key, ui, out, l.kernels_width, l.stacked ? rows_of(rows->size(), 12) : 0);
  if (!l.stacked) ImGui::SameLine();
  longest_view(run.trace, *longest, state.selected, out, l.longest_width, l.stacked ? rows_of(longest->size(), 10) : 0);
}

}  // namespace sl::gui
