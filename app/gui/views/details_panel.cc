// Details of the selected event, with the events it waited for and that
// waited for it (click one to select it).

#include <algorithm>

#include <fmt/format.h>
#include <imgui.h>

#include "app/gui/layout/ruler.h"
#include "app/gui/layout/time_format.h"
#include "app/gui/views/views.h"

namespace sl::gui {
namespace {

void event_link(const trace::CompactTrace& t, uint32_t e, ActionQueue& out) {
  const auto& ev = t.events[e];
  std::string label = fmt::format("{} (dev {}, {}, ends {})##{}", t.name_of(ev), ev.device, stream_name(ev.stream, ev.stream_kind),
                                  format_duration(ev.end_ns), e);
  if (ImGui::Selectable(label.c_str())) out.push_back(Reveal{e});
}

}  // namespace

void show_details(const AppState& state, ActionQueue& out) {
  if (!state.current || state.selected < 0) {
    ImGui::TextDisabled("click an event in the timeline (or search for an instruction) to see its details");
    return;
  }
  const LoadedRun& run = *state.current;
  const trace::CompactTrace& t = run.trace;
  const auto sel = static_cast<uint32_t>(state.selected);
  const trace::EventRef& e = t.events[sel];
  ImGui::Text("%s", t.name_of(e).c_str());
  ImGui::Separator();
  if (ImGui::BeginTable("details", 2, ImGuiTableFlags_SizingFixedFit)) {
    auto row = [](const char* key, const std::string& value) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextDisabled("%s", key);
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(value.c_str());
    };
    row("instruction", e.instruction != 0 ? t.instruction_of(e) : "-");
    row("kind", trace::event_kind_name(e.kind));
    row("device", fmt::format("{}", e.device));
    row("stream", fmt::format("{} ({})", stream_name(e.stream, e.stream_kind), sched::stream_kind_name(e.stream_kind)));
    // Every nanosecond: a kernel of 89 µs at 7.15 s needs all ten digits.
    row("start", format_time_exact(e.start_ns));
    row("end", format_time_exact(e.end_ns));
    row("duration", format_duration_exact(e.duration_ns()) +
                        (e.duration_ns() >= 1000 ? fmt::format("  ({} ns)", group_digits(static_cast<uint64_t>(
                                                                                  std::max<int64_t>(0, e.duration_ns()))))
                                                 : ""));
    // Read from the store for the selected event only.
    const auto extras = event_extras(state, run, sel);
    const trace::TraceStore::EventExtras x = extras.value_or(trace::TraceStore::EventExtras{});
    row("bytes", x.bytes > 0 ? format_bytes(x.bytes) : "-");
    row("flops", x.flops > 0 ? fmt::format("{:.4g}", static_cast<double>(x.flops)) : "-");
    std::string rate = event_rate(e.duration_ns(), x);
    row("achieved", rate.empty() ? "-" : rate);
    row("correlation", extras ? fmt::format("{}", x.correlation) : "-");
    // Linked captures number their steps from 0 (-1: outside every step).
    if (e.iteration != 0 || !run.stats.steps.empty()) {
      row(e.iteration < 0 ? "step" : "iteration / step",
          e.iteration < 0 ? "outside the steps" : fmt::format("{}", e.iteration));
    }
    ImGui::EndTable();
  }
  auto in = waits_of(run.index, sel);
  auto outgoing = waited_by(run.index, sel);
  ImGui::Text("waited for %zu event(s):", in.size());
  for (uint32_t src : in) event_link(t, src, out);
  ImGui::Text("waited on by %zu event(s):", outgoing.size());
  for (uint32_t dst : outgoing) event_link(t, dst, out);
}

}  // namespace sl::gui
