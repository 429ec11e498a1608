// The program's instructions with their streams: a combo box for each
// async-capable one, and the Rerun buttons with the job's progress.

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <imgui.h>

#include "app/gui/views/views.h"
#include "core/sched/streams.h"

namespace sl::gui {
namespace {

void rerun_buttons(const AppState& state, ActionQueue& out) {
  const bool can_rerun = state.current && !state.current->program_text.empty() && !state.busy();
  for (const char* backend : {"sim", "cpu", "cuda"}) {
    const std::string why = rerun_refusal(state, backend);
    ImGui::BeginDisabled(!can_rerun || !why.empty());
    std::string label = fmt::format("Rerun {}", backend);
    if (ImGui::Button(label.c_str())) out.push_back(Rerun{backend});
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
      if (why.empty()) {
        ImGui::SetTooltip("run the program again on %s with the streams below and save it as a new run", backend);
      } else {
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 35);
        ImGui::SetTooltip("%s", why.c_str());
        ImGui::PopTextWrapPos();
      }
    }
    ImGui::SameLine();
  }
  ImGui::NewLine();
  if (state.job.active) {
    const JobProgress& p = *state.job.progress;
    const int64_t total = p.total.load(), done = p.done.load();
    float fraction = total > 0 ? static_cast<float>(done) / static_cast<float>(total) : -1.0f;
    std::string overlay = fmt::format("{} on {}", phase_name(p.phase.load()), state.job.backend);
    if (fraction < 0) {
      // Indeterminate: a bar that moves with time.
      fraction = static_cast<float>(ImGui::GetTime() * 0.5 - static_cast<int>(ImGui::GetTime() * 0.5));
    }
    if (ImGui::Button("Cancel")) out.push_back(CancelRerun{});
    if (ImGui::IsItemHovered()) {
      ImGui::SetTooltip("stop this rerun; its run is kept, marked interrupted (a cpu operation already\n"
                        "running finishes in the background, and nothing of it is saved)");
    }
    ImGui::SameLine();
    ImGui::ProgressBar(fraction, ImVec2(-1, 0), overlay.c_str());
  }
}

// Rows grouped by computation, in the order the computations first appear
// (HLO names repeat across computations: windowed_einsum's x, w, acc, i).
std::vector<size_t> grouped_rows(const LoadedRun& run) {
  std::vector<size_t> rows(run.streams.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  const auto& comps = run.outline.computations;
  if (comps.size() != rows.size()) return rows;
  std::vector<std::string> order;
  for (const auto& c : comps) {
    if (std::find(order.begin(), order.end(), c) == order.end()) order.push_back(c);
  }
  auto rank = [&](size_t i) { return std::find(order.begin(), order.end(), comps[i]) - order.begin(); };
  std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) { return rank(a) < rank(b); });
  return rows;
}

// Suggest: the simulator's search, its progress, and the candidates with an apply button each.
void suggest_section(const AppState& state, ActionQueue& out) {
  const bool has_program = state.current && !state.current->program_text.empty();
  ImGui::BeginDisabled(!has_program || state.suggest.active);
  if (ImGui::Button("Suggest")) out.push_back(Suggest{});
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    ImGui::SetTooltip("%s", !has_program ? "this run has no program to search"
                            : state.suggest.active
                                ? "a search is running"
                                : "search stream assignments (and --comm-sms) with the simulator for a shorter makespan");
  }
  if (state.suggest.active) {
    const JobProgress& p = *state.suggest.progress;
    const int64_t total = p.total.load(), done = p.done.load();
    const float fraction = total > 0 ? static_cast<float>(done) / static_cast<float>(total) : 0.0f;
    std::string overlay = fmt::format("{} simulations of {}", done, total);
    ImGui::SameLine();
    ImGui::ProgressBar(fraction, ImVec2(-1, 0), overlay.c_str());
    return;
  }
  if (!state.suggestions || !state.current || state.suggestions->source_run != state.current->info.id) return;
  const SuggestOutcome& o = *state.suggestions;
  ImGui::SameLine();
  ImGui::TextDisabled("%s, %lld simulations; original %.1f us", o.exhaustive ? "exhaustive" : "local search",
                      static_cast<long long>(o.simulations), static_cast<double>(o.original_makespan_ns) / 1e3);
  if (o.candidates.empty()) {
    ImGui::TextDisabled("no assignment changes the predicted makespan");
    return;
  }
  const bool can_apply = !state.busy();
  for (size_t k = 0; k < o.candidates.size(); ++k) {
    const Suggestion& c = o.candidates[k];
    ImGui::PushID(static_cast<int>(k));
    ImGui::BeginDisabled(!can_apply);
    if (ImGui::SmallButton("apply")) out.push_back(ApplySuggestion{static_cast<int>(k + 1)});
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
      ImGui::SetTooltip("rerun on the simulator (%s) with these streams and compare with this run", o.device_model.c_str());
    }
    ImGui::SameLine();
    const double delta = 100.0 * static_cast<double>(c.makespan_ns - o.original_makespan_ns) /
                         static_cast<double>(std::max<int64_t>(o.original_makespan_ns, 1));
    const ImVec4 colour = delta < 0 ? ImVec4(0.5f, 0.9f, 0.5f, 1.0f) : ImVec4(0.9f, 0.6f, 0.5f, 1.0f);
    ImGui::TextColored(colour, "%zu. %.1f us (%+.1f%%)", k + 1, static_cast<double>(c.makespan_ns) / 1e3, delta);
    ImGui::SameLine();
    const std::string flags = suggestion_flags(c);
    ImGui::TextUnformatted(flags.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", flags.c_str());  // the panel may cut it
    ImGui::PopID();
  }
}

}  // namespace

void show_program_panel(const AppState& state, UiState& ui, ActionQueue& out) {
  if (!state.current) {
    ImGui::TextDisabled("no run open");
    return;
  }
  const LoadedRun& run = *state.current;
  ImGui::Text("program %s", run.info.program_name.c_str());
  rerun_buttons(state, out);
  suggest_section(state, out);
  if (!state.edits.empty()) {
    ImGui::Text("%zu stream edit(s) pending", state.edits.size());
    ImGui::SameLine();
    if (ImGui::SmallButton("reset")) out.push_back(ClearEdits{});
  }
  if (run.streams.empty()) {
    ImGui::TextDisabled("no stream assignment saved with this run");
    return;
  }
  // Offer every compute stream in use plus two spare ones, and the communication stream.
  int max_compute = 1;
  for (const auto& e : run.streams) {
    if (e.stream < sched::kCommStreamBase) max_compute = std::max(max_compute, e.stream);
  }
  for (const auto& [name, stream] : state.edits) {
    if (stream < sched::kCommStreamBase) max_compute = std::max(max_compute, stream);
  }
  std::vector<int> choices;
  for (int s = 0; s <= max_compute + 2; ++s) choices.push_back(s);
  choices.push_back(sched::kCommStreamBase);

  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("program", 2, flags, ImVec2(0, 0))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("instruction", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("stream", ImGuiTableColumnFlags_WidthFixed, 110 * ui.scale);
  ImGui::TableHeadersRow();
  const auto& comps = run.outline.computations;
  std::string group = "\x01";  // no computation is named that: the first row opens a group
  for (size_t row : grouped_rows(run)) {
    const auto& entry = run.streams[row];
    if (row < comps.size() && comps[row] != group) {
      group = comps[row];
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextDisabled("%s", group.empty() ? "(not in the program text)" : group.c_str());
    }
    ImGui::PushID(static_cast<int>(row));
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::Indent(ImGui::GetFontSize() * 0.5f);
    const bool edited = state.edits.count(entry.instruction) != 0;
    if (edited) {
      ImGui::TextColored(ImVec4(1.0f, 0.8f, 0.3f, 1.0f), "%s *", entry.instruction.c_str());
    } else {
      ImGui::TextUnformatted(entry.instruction.c_str());
    }
    if (run.graph_nodes.count(entry.instruction) != 0) {
      ImGui::SameLine();
      ImGui::TextDisabled("(graph)");
      if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("a node of XLA's command buffer (CUDA graph): ordered by the graph's edges,\n"
                          "not by streams, so moving it to another stream changes nothing");
      }
    }
    ImGui::Unindent(ImGui::GetFontSize() * 0.5f);
    ImGui::TableSetColumnIndex(1);
    const int stream = effective_stream(state, entry.instruction);
    if (!entry.async_capable) {
      ImGui::TextDisabled("%s", stream_name(stream).c_str());
    } else {
      ImGui::SetNextItemWidth(-1);
      if (ImGui::BeginCombo("##stream", stream_name(stream).c_str())) {
        for (int choice : choices) {
          if (ImGui::Selectable(stream_name(choice).c_str(), choice == stream)) {
            out.push_back(SetStream{entry.instruction, choice});
          }
        }
        ImGui::EndCombo();
      }
    }
    ImGui::PopID();
  }
  ImGui::EndTable();
}

}  // namespace sl::gui
