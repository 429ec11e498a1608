// The timeline: ruler, one row per (device, stream) track, events from the
// layout draw lists, wait arrows of the selection, and the mouse/keyboard
// gestures, all of which become Actions.

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <imgui.h>

#include "app/gui/layout/colors.h"
#include "app/gui/layout/ruler.h"
#include "app/gui/layout/timeline_layout.h"
#include "app/gui/views/views.h"

namespace sl::gui {
namespace {

constexpr float kLabelWidth = 150;
constexpr float kRulerHeight = 26;
constexpr float kTrackHeight = 22;
constexpr float kTrackGap = 3;
constexpr float kSectionHeight = 20;
constexpr float kMinMergePx = 3;
constexpr ImU32 kBackground = IM_COL32(24, 24, 28, 255);
constexpr ImU32 kRowShade = IM_COL32(32, 32, 38, 255);
constexpr ImU32 kGridColor = IM_COL32(70, 70, 80, 255);
constexpr ImU32 kTextColor = IM_COL32(220, 220, 225, 255);
constexpr ImU32 kArrowColor = IM_COL32(255, 230, 80, 255);

struct Row {
  const LoadedRun* run = nullptr;
  uint32_t track = 0;
  float y = 0;           // top, relative to the canvas origin
  int64_t offset = 0;    // run time = viewport time + offset
  bool baseline = false;
  const std::vector<uint8_t>* highlight = nullptr;
};

struct Section {
  std::string title;
  float y = 0;
};

ImU32 label_color(uint32_t fill) {
  Rgb c = unpack_rgb(fill);
  int luminance = (c.r * 299 + c.g * 587 + c.b * 114) / 1000;
  return luminance > 140 ? IM_COL32(10, 10, 10, 255) : IM_COL32(250, 250, 250, 255);
}

void show_legend() {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (int k = 0; k <= static_cast<int>(trace::EventKind::kOther); ++k) {
    auto kind = static_cast<trace::EventKind>(k);
    ImVec2 p = ImGui::GetCursorScreenPos();
    float h = ImGui::GetTextLineHeight();
    dl->AddRectFilled(p, ImVec2(p.x + h, p.y + h), kind_color(kind));
    ImGui::Dummy(ImVec2(h, h));
    ImGui::SameLine();
    ImGui::TextUnformatted(trace::event_kind_name(kind));
    ImGui::SameLine(0, 16);
  }
  ImVec2 p = ImGui::GetCursorScreenPos();
  float h = ImGui::GetTextLineHeight();
  dl->AddRectFilled(p, ImVec2(p.x + h, p.y + h), merged_color(trace::EventKind::kGemm));
  ImGui::Dummy(ImVec2(h, h));
  ImGui::SameLine();
  ImGui::TextUnformatted("merged (< 3 px)");
}

void show_ruler(const Viewport& view, float track_w, ImVec2 origin) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(origin, ImVec2(origin.x + kLabelWidth + track_w, origin.y + kRulerHeight), kBackground);
  const Ruler ruler = make_ruler(view, track_w);
  for (const RulerTick& tick : ruler.ticks) {
    float x = origin.x + kLabelWidth + tick.x;
    float top = origin.y + (tick.major ? kRulerHeight * 0.45f : kRulerHeight * 0.75f);
    dl->AddLine(ImVec2(x, top), ImVec2(x, origin.y + kRulerHeight), kGridColor);
    if (tick.major) dl->AddText(ImVec2(x + 3, origin.y + 1), kTextColor, tick.label.c_str());
  }
  std::string span = "view " + format_duration(view.span_ns());
  dl->AddText(ImVec2(origin.x + 4, origin.y + 1), kTextColor, span.c_str());
}

void tooltip_for(const LoadedRun& run, const DrawRect& rect, UiState& ui) {
  const trace::Trace& t = run.trace;
  const trace::Event& e = t.events[static_cast<size_t>(rect.event)];
  ImGui::BeginTooltip();
  if (rect.merged > 1) {
    ui.last_hover = fmt::format("{} events merged", rect.merged);
    ImGui::Text("%u events merged (each narrower than 3 px)", rect.merged);
    ImGui::TextUnformatted("click or zoom in to see them");
  } else {
    ui.last_hover = t.name_of(e);
    ImGui::TextUnformatted(t.name_of(e).c_str());
    ImGui::Separator();
    ImGui::Text("instruction  %s", e.instruction != 0 ? t.instruction_of(e).c_str() : "-");
    ImGui::Text("kind         %s", trace::event_kind_name(e.kind));
    ImGui::Text("stream       dev %d, %s", e.device, stream_name(e.stream).c_str());
    ImGui::Text("start        %s", format_duration(e.start_ns).c_str());
    ImGui::Text("duration     %s", format_duration(e.duration_ns()).c_str());
    if (e.bytes > 0) ImGui::Text("bytes        %s", format_bytes(e.bytes).c_str());
    if (e.flops > 0) ImGui::Text("flops        %.3g", static_cast<double>(e.flops));
    std::string rate = event_rate(e);
    if (!rate.empty()) ImGui::Text("achieved     %s", rate.c_str());
  }
  ImGui::EndTooltip();
}

void draw_arrow(ImDrawList* dl, ImVec2 from, ImVec2 to) {
  dl->AddBezierCubic(from, ImVec2(from.x + 30, from.y), ImVec2(to.x - 30, to.y), to, kArrowColor, 1.5f);
  dl->AddTriangleFilled(ImVec2(to.x, to.y), ImVec2(to.x - 8, to.y - 4), ImVec2(to.x - 8, to.y + 4), kArrowColor);
}

// Keyboard zoom and pan (W/S or Up/Down zoom, A/D or Left/Right pan, F fits).
void keyboard(const AppState& state, ActionQueue& out) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  const Viewport& v = state.viewport;
  const int64_t center = v.start_ns + v.span_ns() / 2;
  if (ImGui::IsKeyPressed('W') || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow))) {
    out.push_back(ZoomAt{0.8, center});
  }
  if (ImGui::IsKeyPressed('S') || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow))) {
    out.push_back(ZoomAt{1.25, center});
  }
  if (ImGui::IsKeyPressed('A') || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) {
    out.push_back(Pan{-v.span_ns() / 10});
  }
  if (ImGui::IsKeyPressed('D') || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) {
    out.push_back(Pan{v.span_ns() / 10});
  }
  if (ImGui::IsKeyPressed('F')) out.push_back(FitAll{});
}

// Shown while a run (or a compare baseline) loads on its worker thread.
void loading_indicator(const LoadJob& load) {
  const JobProgress& p = *load.progress;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - load.started).count();
  std::string text = fmt::format("loading run {}{}: {}", load.run_id, load.baseline ? " (baseline)" : "",
                                 phase_name(p.phase.load()));
  if (p.total.load() > 0) text += fmt::format(", {} events", p.total.load());
  text += fmt::format(" ({:.1f} s)", seconds);
  // Indeterminate: a bar that moves with time.
  auto fraction = static_cast<float>(ImGui::GetTime() * 0.5 - static_cast<int>(ImGui::GetTime() * 0.5));
  ImGui::ProgressBar(fraction, ImVec2(-1, 0), text.c_str());
}

}  // namespace

void show_timeline(const AppState& state, UiState& ui, ActionQueue& out) {
  if (state.load.active) loading_indicator(state.load);
  if (!state.store) {
    ImGui::TextWrapped("No database is open. Use File > Open database, or start with: streamlens-gui FILE.db");
    return;
  }
  if (!state.current) {
    if (!state.load.active) ImGui::TextWrapped("Pick a run in the runs panel (or: streamlens-gui --db FILE --run N).");
    return;
  }
  show_legend();
  const LoadedRun& cur = *state.current;
  const Viewport& view = state.viewport;
  const ImGuiIO& io = ImGui::GetIO();
  const float full_w = std::max(100.0f, ImGui::GetContentRegionAvail().x);
  const float track_w = std::max(50.0f, full_w - kLabelWidth);

  // Ruler (dragging on it selects a range to zoom to).
  ImVec2 ruler_origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("ruler", ImVec2(full_w, kRulerHeight));
  show_ruler(view, track_w, ruler_origin);

  // Rows: the baseline's tracks first when comparing, then the current run's.
  std::vector<Row> rows;
  std::vector<Section> sections;
  float y = 0;
  auto add_rows = [&](const LoadedRun& run, int64_t offset, bool baseline, const std::vector<uint8_t>* highlight) {
    for (uint32_t t = 0; t < run.index.tracks.size(); ++t) {
      rows.push_back({&run, t, y, offset, baseline, highlight});
      y += kTrackHeight + kTrackGap;
    }
  };
  if (state.comparing()) {
    sections.push_back({fmt::format("baseline: run {} ({})", state.baseline->info.id, state.baseline->info.name), y});
    y += kSectionHeight;
    add_rows(*state.baseline, state.baseline->index.begin_ns - cur.index.begin_ns, true,
             &state.comparison->base_changed);
    sections.push_back({fmt::format("current: run {} ({})", cur.info.id, cur.info.name), y});
    y += kSectionHeight;
  }
  size_t first_current_row = rows.size();
  add_rows(cur, 0, false, state.comparing() ? &state.comparison->current_changed : nullptr);
  const float content_h = y;

  ImGui::BeginChild("tracks", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollWithMouse);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float canvas_h = std::max({1.0f, content_h, ImGui::GetContentRegionAvail().y});
  ImGui::InvisibleButton("canvas", ImVec2(full_w, canvas_h),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  const bool hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 clip_min = ImGui::GetWindowPos();
  const ImVec2 clip_max(clip_min.x + ImGui::GetWindowSize().x, clip_min.y + ImGui::GetWindowSize().y);
  const float area_x = origin.x + kLabelWidth;
  dl->AddRectFilled(ImVec2(origin.x, std::max(origin.y, clip_min.y)),
                    ImVec2(origin.x + full_w, std::min(origin.y + canvas_h, clip_max.y)), kBackground);

  if (cur.trace.events.empty()) {
    dl->AddText(ImVec2(area_x + 10, origin.y + 10), kTextColor,
                "This run has no events: nothing ran, or the capture recorded nothing.");
  }
  for (const Section& s : sections) {
    dl->AddText(ImVec2(origin.x + 4, origin.y + s.y + 3), IM_COL32(255, 200, 120, 255), s.title.c_str());
  }

  LayoutOptions options;
  options.width_px = track_w;
  options.min_px = kMinMergePx;
  options.char_px = ImGui::CalcTextSize("M").x;
  const float mouse_x = io.MousePos.x - area_x;
  const float mouse_y = io.MousePos.y - origin.y;
  const DrawRect* hovered_rect = nullptr;
  const Row* hovered_row = nullptr;
  std::vector<TrackDraw> drawn;
  drawn.reserve(rows.size());

  dl->PushClipRect(ImVec2(origin.x, clip_min.y), ImVec2(origin.x + full_w, clip_max.y), true);
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const float top = origin.y + row.y;
    if (top > clip_max.y || top + kTrackHeight < clip_min.y) continue;  // scrolled out: no layout
    const Track& track = row.run->index.tracks[row.track];
    if (r % 2 == 1) dl->AddRectFilled(ImVec2(origin.x, top), ImVec2(origin.x + full_w, top + kTrackHeight), kRowShade);
    std::string label = track_label(track);
    dl->AddText(ImVec2(origin.x + 4, top + 4), kTextColor, label.c_str());

    Viewport run_view{view.start_ns + row.offset, view.end_ns + row.offset};
    options.highlight = row.highlight;
    // `drawn` is reserved for every row, so pointers into it stay valid.
    drawn.push_back(layout_track(row.run->trace, row.run->index, row.track, run_view, options));
    const TrackDraw& draw = drawn.back();
    const bool mouse_in_row = hovered && mouse_y >= row.y && mouse_y < row.y + kTrackHeight;
    dl->PushClipRect(ImVec2(area_x, top), ImVec2(area_x + track_w, top + kTrackHeight), true);
    for (const DrawRect& rect : draw.rects) {
      ImVec2 a(area_x + rect.x0, top + 1), b(area_x + rect.x1, top + kTrackHeight - 1);
      if (b.x - a.x > 4) b.x -= 1;  // a one-pixel gap keeps back-to-back events apart
      dl->AddRectFilled(a, b, rect.color);
      if (rect.highlighted) dl->AddRect(a, b, pack_rgba(kHighlightRgb), 0, 0, 2.0f);
      if (!row.baseline && rect.merged == 1 && rect.event == state.selected) {
        dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), pack_rgba(kSelectionRgb), 0, 0, 2.0f);
      }
      if (rect.label_chars > 0) {
        const std::string& name = row.run->trace.name_of(row.run->trace.events[static_cast<size_t>(rect.event)]);
        std::string text = name.substr(0, rect.label_chars);
        if (rect.label_truncated) text += "..";
        dl->AddText(ImVec2(std::max(a.x, area_x) + options.label_pad_px, top + 4), label_color(rect.color),
                    text.c_str());
      }
      if (mouse_in_row && hovered_rect == nullptr && mouse_x >= rect.x0 - 1 && mouse_x <= rect.x1 + 1) {
        hovered_rect = &rect;
        hovered_row = &row;
      }
    }
    dl->PopClipRect();
  }

  // Wait arrows of the selected event: into it from what it waited for, and out of it.
  if (state.selected >= 0 && static_cast<size_t>(state.selected) < cur.trace.events.size()) {
    auto point = [&](uint32_t e, bool at_end) {
      const auto& ev = cur.trace.events[e];
      const Row& row = rows[first_current_row + cur.index.track_of[e]];
      float x = area_x + std::clamp(view.to_px(at_end ? ev.end_ns : ev.start_ns, track_w), -10.0f, track_w + 10);
      return ImVec2(x, origin.y + row.y + kTrackHeight / 2);
    };
    auto sel = static_cast<uint32_t>(state.selected);
    dl->PushClipRect(ImVec2(area_x, clip_min.y), ImVec2(area_x + track_w, clip_max.y), true);
    for (uint32_t src : waits_of(cur.index, sel)) draw_arrow(dl, point(src, true), point(sel, false));
    for (uint32_t dst : waited_by(cur.index, sel)) draw_arrow(dl, point(sel, true), point(dst, false));
    dl->PopClipRect();
  }

  // Gestures.
  if (hovered && io.MouseWheel != 0) {
    out.push_back(ZoomAt{std::pow(0.85, static_cast<double>(io.MouseWheel)), view.to_ns(mouse_x, track_w)});
  }
  if (hovered && (ImGui::IsMouseClicked(ImGuiMouseButton_Right) || (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && io.KeyShift))) {
    ui.range_dragging = true;
    ui.range_x0 = mouse_x;
  }
  if (ui.range_dragging) {
    float x0 = std::min(ui.range_x0, mouse_x), x1 = std::max(ui.range_x0, mouse_x);
    dl->AddRectFilled(ImVec2(area_x + x0, clip_min.y), ImVec2(area_x + x1, clip_max.y), IM_COL32(120, 160, 255, 60));
    std::string span = format_duration(static_cast<int64_t>((x1 - x0) * view.ns_per_px(track_w)));
    dl->AddText(ImVec2(area_x + x1 + 4, io.MousePos.y - 16), kTextColor, span.c_str());
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left) && !ImGui::IsMouseDown(ImGuiMouseButton_Right)) {
      ui.range_dragging = false;
      if (x1 - x0 > 3) out.push_back(ZoomTo{view.to_ns(x0, track_w), view.to_ns(x1, track_w)});
    }
  } else if (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f)) {
    ui.panning = true;
    ui.pan_residual_ns -= static_cast<double>(io.MouseDelta.x) * view.ns_per_px(track_w);
    auto whole = static_cast<int64_t>(ui.pan_residual_ns);
    ui.pan_residual_ns -= static_cast<double>(whole);
    if (whole != 0) out.push_back(Pan{whole});
  }
  if (ImGui::IsMouseReleased(ImGuiMouseButton_Left)) {
    if (hovered && !ui.panning && !io.KeyShift && mouse_x >= 0) {
      if (hovered_rect != nullptr && hovered_rect->merged > 1 && hovered_row != nullptr) {
        // Clicking a merged block zooms to it.
        out.push_back(ZoomTo{view.to_ns(hovered_rect->x0, track_w), view.to_ns(hovered_rect->x1, track_w)});
      } else if (hovered_rect != nullptr && hovered_row != nullptr && !hovered_row->baseline) {
        out.push_back(Select{hovered_rect->event});
      } else {
        out.push_back(Select{-1});
      }
    }
    ui.panning = false;
    ui.pan_residual_ns = 0;
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) out.push_back(FitAll{});
  if (hovered && hovered_rect != nullptr && hovered_row != nullptr && !ui.range_dragging && !ui.panning) {
    tooltip_for(*hovered_row->run, *hovered_rect, ui);
  }
  dl->PopClipRect();
  if (!ui.headless) keyboard(state, out);
  ImGui::EndChild();
}

}  // namespace sl::gui
