// The timeline: ruler, one row per (device, stream) track, events from the
// layout draw lists, wait arrows of the selection, and the mouse/keyboard
// gestures, all of which become Actions.

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <imgui.h>

#include "app/gui/layout/colors.h"
#include "app/gui/layout/legend.h"
#include "app/gui/layout/ruler.h"
#include "app/gui/layout/time_format.h"
#include "app/gui/layout/timeline_layout.h"
#include "app/gui/layout/timeline_metrics.h"
#include "app/gui/views/views.h"

namespace sl::gui {
namespace {

// Sizes that scale with the font are in TimelineMetrics; merging stays at
// 3 px: it is about how fine the screen draws, not how big the text is.
constexpr float kMinMergePx = 3;
constexpr ImU32 kBackground = IM_COL32(24, 24, 28, 255);
constexpr ImU32 kRowShade = IM_COL32(32, 32, 38, 255);
constexpr ImU32 kGridColor = IM_COL32(70, 70, 80, 255);
constexpr ImU32 kTextColor = IM_COL32(220, 220, 225, 255);
constexpr ImU32 kArrowColor = IM_COL32(255, 230, 80, 255);
const ImU32 kMeasureColor = pack_rgba(kMeasureRgb);

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
  float wrap = 0;  // wrapped at this width: a narrow window gives a long title more lines
};

// Runs linked to an XLA module (streamlens import --xla-dump) know each
// kernel's instruction: labels show it.
bool is_linked(const trace::RunInfo& info) { return trace::config_is_linked(info.config_json); }

ImU32 label_color(uint32_t fill) {
  Rgb c = unpack_rgb(fill);
  int luminance = (c.r * 299 + c.g * 587 + c.b * 114) / 1000;
  return luminance > 140 ? IM_COL32(10, 10, 10, 255) : IM_COL32(250, 250, 250, 255);
}

// The colour legend, wrapped onto as many lines as the timeline's width needs.
void show_legend() {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float h = ImGui::GetTextLineHeight();
  const float inner = ImGui::GetStyle().ItemInnerSpacing.x;
  constexpr int kKinds = static_cast<int>(trace::EventKind::kOther) + 1;
  constexpr const char* kMergedText = "merged: main kind, darker = sparser";
  std::vector<float> widths;
  for (int k = 0; k < kKinds; ++k) {
    widths.push_back(h + inner + ImGui::CalcTextSize(trace::event_kind_name(static_cast<trace::EventKind>(k))).x);
  }
  widths.push_back(h + inner + ImGui::CalcTextSize(kMergedText).x);
  const float avail = std::max(1.0f, ImGui::GetContentRegionAvail().x);
  const LegendLayout layout = flow_legend(widths, avail, ImGui::GetFontSize(), h, ImGui::GetStyle().ItemSpacing.y);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  for (size_t i = 0; i < widths.size(); ++i) {
    const ImVec2 p(origin.x + layout.spots[i].x, origin.y + layout.spots[i].y);
    const bool merged = i == static_cast<size_t>(kKinds);
    if (merged) {
      dl->AddRectFilled(p, ImVec2(p.x + h / 2, p.y + h), merged_color(trace::EventKind::kGemm, 1.0));
      dl->AddRectFilled(ImVec2(p.x + h / 2, p.y), ImVec2(p.x + h, p.y + h), merged_color(trace::EventKind::kGemm, 0.2));
    } else {
      dl->AddRectFilled(p, ImVec2(p.x + h, p.y + h), kind_color(static_cast<trace::EventKind>(i)));
    }
    const char* text = merged ? kMergedText : trace::event_kind_name(static_cast<trace::EventKind>(i));
    dl->AddText(ImVec2(p.x + h + inner, p.y), ImGui::GetColorU32(ImGuiCol_Text), text);
    if (merged && ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(p, ImVec2(p.x + widths[i], p.y + h))) {
      ImGui::SetTooltip("events narrower than 3 px merge into one block, coloured by the kind\n"
                        "with the most time in it and darker the less of it is busy");
    }
  }
  ImGui::Dummy(ImVec2(avail, layout.height));
}

void show_ruler(const Viewport& view, float track_w, ImVec2 origin, const TimelineMetrics& m) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float h = m.ruler_height;
  dl->AddRectFilled(origin, ImVec2(origin.x + m.label_width + track_w, origin.y + h), kBackground);
  // Labels as far apart as at scale 1 in characters: wider text, fewer ticks.
  const Ruler ruler = make_ruler(view, track_w, 90 * m.scale);
  float last_end = -1e9f;  // right edge of the last label drawn
  for (const RulerTick& tick : ruler.ticks) {
    float x = origin.x + m.label_width + tick.x;
    float top = origin.y + (tick.major ? h * 0.45f : h * 0.75f);
    dl->AddLine(ImVec2(x, top), ImVec2(x, origin.y + h), kGridColor);
    if (!tick.major) continue;
    const float w = ImGui::CalcTextSize(tick.label.c_str()).x;
    const float lx = ruler_label_x(tick.x, w, track_w, 3 * m.scale);
    if (lx < last_end + 3 * m.scale) continue;  // the last label, turned left, would run into the one before
    dl->AddText(ImVec2(origin.x + m.label_width + lx, origin.y + 1), kTextColor, tick.label.c_str());
    last_end = lx + w;
  }
  std::string span = "view " + format_duration(view.span_ns());
  dl->AddText(ImVec2(origin.x + m.text_pad, origin.y + 1), kTextColor, span.c_str());
  if (ruler.relative) {
    // Deep zoom far from 0: ticks count from this time, printed in full once.
    std::string from = "+ from " + format_time_exact(ruler.origin_ns);
    dl->AddText(ImVec2(origin.x + m.text_pad, origin.y + h / 2), IM_COL32(255, 200, 120, 255), from.c_str());
  }
}

// The whole run in one strip: busy time per bin coloured by its main kind,
// the visible range outlined; clicking or dragging in it moves the view there.
void show_overview(const LoadedRun& run, const Viewport& view, float full_w, const TimelineMetrics& m,
                   ActionQueue& out) {
  const Overview& o = run.stats.overview;
  ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("overview", ImVec2(full_w, m.overview_height));
  const bool held = ImGui::IsItemActive();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float x0 = p.x + m.label_width, w = std::max(1.0f, full_w - m.label_width);
  dl->AddRectFilled(p, ImVec2(p.x + full_w, p.y + m.overview_height), kBackground);
  dl->AddText(ImVec2(p.x + m.text_pad, p.y + 1), kTextColor, "overview");
  if (o.bins.empty() || o.max_busy_ns <= 0) return;
  const Viewport whole{o.begin_ns, o.end_ns};
  const float bin_w = w / static_cast<float>(o.bins.size());
  for (size_t b = 0; b < o.bins.size(); ++b) {
    const OverviewBin& bin = o.bins[b];
    if (bin.busy_ns <= 0) continue;
    const float h = (m.overview_height - 2) * static_cast<float>(static_cast<double>(bin.busy_ns) /
                                                                static_cast<double>(o.max_busy_ns));
    const float bx = x0 + bin_w * static_cast<float>(b);
    dl->AddRectFilled(ImVec2(bx, p.y + m.overview_height - 1 - std::max(1.0f, h)),
                      ImVec2(bx + std::max(1.0f, bin_w), p.y + m.overview_height - 1), kind_color(bin.kind));
  }
  for (const StepSpan& step : run.stats.steps) {
    const float sx = x0 + whole.to_px(step.start_ns, w);
    dl->AddLine(ImVec2(sx, p.y), ImVec2(sx, p.y + m.overview_height), IM_COL32(255, 255, 255, 70));
  }
  const float vx0 = x0 + std::clamp(whole.to_px(view.start_ns, w), 0.0f, w);
  const float vx1 = x0 + std::clamp(whole.to_px(view.end_ns, w), 0.0f, w);
  dl->AddRectFilled(ImVec2(vx0, p.y), ImVec2(std::max(vx0 + 2, vx1), p.y + m.overview_height), IM_COL32(255, 255, 255, 40));
  dl->AddRect(ImVec2(vx0, p.y), ImVec2(std::max(vx0 + 2, vx1), p.y + m.overview_height), IM_COL32(255, 255, 255, 200));
  if (held) {
    const float mx = ImGui::GetIO().MousePos.x - x0;
    if (mx >= 0 && mx <= w) {
      const int64_t centre = whole.to_ns(mx, w);
      const int64_t delta = centre - (view.start_ns + view.span_ns() / 2);
      if (delta != 0) out.push_back(Pan{delta});
    }
  }
}

// Step markers of linked runs (or --iterations passes) on the ruler: a line
// at each step's start and its number where there is room.
void show_steps(const std::vector<StepSpan>& steps, const Viewport& view, float track_w, ImVec2 origin,
                const TimelineMetrics& m) {
  const float height = m.ruler_height;
  if (steps.empty()) return;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float area_x = origin.x + m.label_width;
  auto first = std::lower_bound(steps.begin(), steps.end(), view.start_ns,
                                [](const StepSpan& s, int64_t t) { return s.end_ns < t; });
  float last_label = -1e9f;
  for (auto it = first; it != steps.end() && it->start_ns <= view.end_ns; ++it) {
    const float x = area_x + view.to_px(it->start_ns, track_w);
    if (x >= area_x) dl->AddLine(ImVec2(x, origin.y), ImVec2(x, origin.y + height), IM_COL32(255, 255, 255, 60));
    if (std::max(x, area_x) + 3 * m.scale - last_label <= m.step_label_gap) continue;  // no room: no label text
    std::string label = fmt::format("step {}", it->step);
    // Kept inside the ruler: the last step's label turns left of its line.
    const float lx = area_x + ruler_label_x(std::max(x, area_x) - area_x, ImGui::CalcTextSize(label.c_str()).x,
                                            track_w, 3 * m.scale);
    if (lx - last_label > m.step_label_gap) {
      dl->AddText(ImVec2(lx, origin.y + height - ImGui::GetFontSize()), IM_COL32(200, 220, 255, 255), label.c_str());
      last_label = lx;
    }
  }
}

void tooltip_for(const AppState& state, const LoadedRun& run, const DrawRect& rect, UiState& ui) {
  const trace::CompactTrace& t = run.trace;
  const trace::EventRef& e = t.events[static_cast<size_t>(rect.event)];
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
    ImGui::Text("stream       dev %d, %s", e.device, stream_name(e.stream, e.stream_kind).c_str());
    ImGui::Text("start        %s", format_time_us(e.start_ns).c_str());
    ImGui::Text("duration     %s", format_duration(e.duration_ns()).c_str());
    const trace::TraceStore::EventExtras x =
        event_extras(state, run, static_cast<uint32_t>(rect.event)).value_or(trace::TraceStore::EventExtras{});
    if (x.bytes > 0) ImGui::Text("bytes        %s", format_bytes(x.bytes).c_str());
    if (x.flops > 0) ImGui::Text("flops        %.3g", static_cast<double>(x.flops));
    std::string rate = event_rate(e.duration_ns(), x);
    if (!rate.empty()) ImGui::Text("achieved     %s", rate.c_str());
  }
  ImGui::EndTooltip();
}

// The persistent measurement: a band with its edges and the exact Δt.
void draw_measure(const RangeStats& r, const Viewport& view, float track_w, float area_x, float top, float bottom,
                  const TimelineMetrics& m) {
  const float edge = m.line_width / 2;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float x0 = area_x + std::clamp(view.to_px(r.t0, track_w), -2.0f, track_w + 2);
  const float x1 = area_x + std::clamp(view.to_px(r.t1, track_w), -2.0f, track_w + 2);
  dl->AddRectFilled(ImVec2(x0, top), ImVec2(x1, bottom), IM_COL32(255, 220, 120, 36));
  // Edges as 2 px filled rects: crisp (no anti-aliasing), so screenshots can find them.
  dl->AddRectFilled(ImVec2(std::floor(x0) - edge, top), ImVec2(std::floor(x0) + edge, bottom), kMeasureColor);
  dl->AddRectFilled(ImVec2(std::floor(x1) - edge, top), ImVec2(std::floor(x1) + edge, bottom), kMeasureColor);
  std::string text = "dt " + format_duration_exact(r.t1 - r.t0) + fmt::format("  ({} events)", r.events);
  const ImVec2 size = ImGui::CalcTextSize(text.c_str());
  const float pad = m.text_pad;
  const float tx = std::max(area_x + 2, std::min((x0 + x1 - size.x) / 2, area_x + track_w - size.x - 2));
  dl->AddRectFilled(ImVec2(tx - pad, top + pad / 2), ImVec2(tx + size.x + pad, top + size.y + pad),
                    IM_COL32(40, 34, 10, 230));
  dl->AddText(ImVec2(tx, top + pad * 3 / 4), kMeasureColor, text.c_str());
}

void draw_arrow(ImDrawList* dl, ImVec2 from, ImVec2 to, const TimelineMetrics& m) {
  const float reach = m.arrow_reach, head = m.arrow_head;
  dl->AddBezierCubic(from, ImVec2(from.x + reach, from.y), ImVec2(to.x - reach, to.y), to, kArrowColor,
                     0.75f * m.line_width);
  dl->AddTriangleFilled(ImVec2(to.x, to.y), ImVec2(to.x - head, to.y - head / 2), ImVec2(to.x - head, to.y + head / 2),
                        kArrowColor);
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
  if (state.range && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) out.push_back(ClearRange{});
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
  const TimelineMetrics m = timeline_metrics(ui.scale);
  const LoadedRun& cur = *state.current;
  const Viewport& view = state.viewport;
  const ImGuiIO& io = ImGui::GetIO();
  const float full_w = std::max(100.0f, ImGui::GetContentRegionAvail().x);
  const float track_w = std::max(50.0f, full_w - m.label_width);

  if (!cur.stats_pending()) show_overview(cur, view, full_w, m, out);
  // Ruler (dragging on it selects a range to zoom to).
  ImVec2 ruler_origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("ruler", ImVec2(full_w, m.ruler_height));
  show_ruler(view, track_w, ruler_origin, m);
  if (!cur.stats_pending()) show_steps(cur.stats.steps, view, track_w, ruler_origin, m);

  // Rows: when comparing, each (device, stream) shows the baseline's track
  // right above the current run's, so the same stream lines up.
  std::vector<Row> rows;
  std::vector<Section> sections;
  std::vector<size_t> current_row_of(cur.index.tracks.size(), 0);
  float y = 0;
  auto add_row = [&](const LoadedRun& run, uint32_t t, int64_t offset, bool baseline,
                     const std::vector<uint8_t>* highlight) {
    if (!baseline) current_row_of[t] = rows.size();
    rows.push_back({&run, t, y, offset, baseline, highlight});
    y += m.track_height + m.track_gap;
  };
  if (state.comparing()) {
    auto add_section = [&](std::string title) {
      const float wrap = std::max(50.0f, full_w - 2 * m.text_pad);
      const float text_h = ImGui::CalcTextSize(title.c_str(), nullptr, false, wrap).y;
      sections.push_back({std::move(title), y, wrap});
      y += std::max(m.section_height, text_h + m.section_height - ImGui::GetFontSize());
    };
    add_section(fmt::format("baseline run {} ({}, dimmed labels) above current run {} ({}), per stream",
                            state.baseline->info.id, state.baseline->info.name, cur.info.id, cur.info.name));
    if (std::string why = programs_differ(*state.comparison); !why.empty()) add_section("warning: " + why);
    // The compared iterations on top of each other (a captured step over
    // its simulation), and streams paired by their matched instructions.
    const int64_t offset = state.comparison->base_span.start_ns - state.comparison->current_span.start_ns;
    for (const AlignedTrack& a : align_tracks(state.baseline->index, cur.index, &state.comparison->summary)) {
      if (a.base_track >= 0) {
        add_row(*state.baseline, static_cast<uint32_t>(a.base_track), offset, true, &state.comparison->base_changed);
      }
      if (a.current_track >= 0) {
        add_row(cur, static_cast<uint32_t>(a.current_track), 0, false, &state.comparison->current_changed);
      }
    }
  } else {
    for (uint32_t t = 0; t < cur.index.tracks.size(); ++t) add_row(cur, t, 0, false, nullptr);
  }
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
  const float area_x = origin.x + m.label_width;
  dl->AddRectFilled(ImVec2(origin.x, std::max(origin.y, clip_min.y)),
                    ImVec2(origin.x + full_w, std::min(origin.y + canvas_h, clip_max.y)), kBackground);

  if (cur.trace.events.empty()) {
    dl->AddText(ImVec2(area_x + 10, origin.y + 10), kTextColor,
                "This run has no events: nothing ran, or the capture recorded nothing.");
  }
  for (const Section& s : sections) {
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(),
                ImVec2(origin.x + m.text_pad, origin.y + s.y + centred_text_y(m.section_height, ImGui::GetFontSize())),
                IM_COL32(255, 200, 120, 255), s.title.c_str(), nullptr, s.wrap);
  }

  LayoutOptions options;
  options.width_px = track_w;
  options.min_px = kMinMergePx;
  options.char_px = ImGui::CalcTextSize("M").x;
  options.label_pad_px = m.text_pad;
  const float mouse_x = io.MousePos.x - area_x;
  const float mouse_y = io.MousePos.y - origin.y;
  const DrawRect* hovered_rect = nullptr;
  const Row* hovered_row = nullptr;
  std::vector<TrackDraw> drawn;
  drawn.reserve(rows.size());

  const float text_y = centred_text_y(m.track_height, ImGui::GetFontSize());
  dl->PushClipRect(ImVec2(origin.x, clip_min.y), ImVec2(origin.x + full_w, clip_max.y), true);
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const float top = origin.y + row.y;
    if (top > clip_max.y || top + m.track_height < clip_min.y) continue;  // scrolled out: no layout
    const Track& track = row.run->index.tracks[row.track];
    if (r % 2 == 1) dl->AddRectFilled(ImVec2(origin.x, top), ImVec2(origin.x + full_w, top + m.track_height), kRowShade);
    std::string label = (row.baseline ? "base " : state.comparing() ? "new  " : "") + track_label(track);
    dl->AddText(ImVec2(origin.x + m.text_pad, top + text_y), row.baseline ? IM_COL32(150, 150, 160, 255) : kTextColor,
                label.c_str());

    Viewport run_view{view.start_ns + row.offset, view.end_ns + row.offset};
    options.highlight = row.highlight;
    options.prefer_instruction = is_linked(row.run->info);
    // `drawn` is reserved for every row, so pointers into it stay valid.
    drawn.push_back(layout_track(row.run->trace, row.run->index, row.track, run_view, options));
    const TrackDraw& draw = drawn.back();
    const bool mouse_in_row = hovered && mouse_y >= row.y && mouse_y < row.y + m.track_height;
    dl->PushClipRect(ImVec2(area_x, top), ImVec2(area_x + track_w, top + m.track_height), true);
    for (const DrawRect& rect : draw.rects) {
      ImVec2 a(area_x + rect.x0, top + 1), b(area_x + rect.x1, top + m.track_height - 1);
      if (b.x - a.x > 4) b.x -= 1;  // a one-pixel gap keeps back-to-back events apart
      dl->AddRectFilled(a, b, rect.color);
      if (rect.highlighted) dl->AddRect(a, b, pack_rgba(kHighlightRgb), 0, 0, m.line_width);
      if (!row.baseline && rect.merged == 1 && rect.event == state.selected) {
        const float out = m.line_width / 2;
        dl->AddRect(ImVec2(a.x - out, a.y - out), ImVec2(b.x + out, b.y + out), pack_rgba(kSelectionRgb), 0, 0,
                    m.line_width);
      }
      if (rect.label_chars > 0) {
        const std::string& name = label_text(row.run->trace, row.run->trace.events[static_cast<size_t>(rect.event)],
                                             options.prefer_instruction);
        std::string text = rect.label_truncated ? shorten_middle(name, rect.label_chars) : name;
        dl->AddText(ImVec2(std::max(a.x, area_x) + options.label_pad_px, top + text_y), label_color(rect.color),
                    text.c_str());
      }
      if (mouse_in_row && hovered_rect == nullptr && mouse_x >= rect.x0 - 1 && mouse_x <= rect.x1 + 1) {
        hovered_rect = &rect;
        hovered_row = &row;
      }
    }
    dl->PopClipRect();
  }

  // Step boundaries of linked runs, faintly across every track.
  if (!cur.stats_pending() && !cur.stats.steps.empty()) {
    dl->PushClipRect(ImVec2(area_x, clip_min.y), ImVec2(area_x + track_w, clip_max.y), true);
    const auto& steps = cur.stats.steps;
    auto it = std::lower_bound(steps.begin(), steps.end(), view.start_ns,
                               [](const StepSpan& st, int64_t t) { return st.end_ns < t; });
    for (int drawn_lines = 0; it != steps.end() && it->start_ns <= view.end_ns && drawn_lines < 2000; ++it, ++drawn_lines) {
      const float x = area_x + view.to_px(it->start_ns, track_w);
      dl->AddLine(ImVec2(x, origin.y), ImVec2(x, origin.y + content_h), IM_COL32(255, 255, 255, 28));
    }
    dl->PopClipRect();
  }

  // Wait arrows of the selected event: into it from what it waited for, and out of it.
  if (state.selected >= 0 && static_cast<size_t>(state.selected) < cur.trace.events.size()) {
    auto point = [&](uint32_t e, bool at_end) {
      const auto& ev = cur.trace.events[e];
      const Row& row = rows[current_row_of[cur.index.track_of(e)]];
      float x = area_x + std::clamp(view.to_px(at_end ? ev.end_ns : ev.start_ns, track_w), -10.0f, track_w + 10);
      return ImVec2(x, origin.y + row.y + m.track_height / 2);
    };
    auto sel = static_cast<uint32_t>(state.selected);
    dl->PushClipRect(ImVec2(area_x, clip_min.y), ImVec2(area_x + track_w, clip_max.y), true);
    for (uint32_t src : waits_of(cur.index, sel)) draw_arrow(dl, point(src, true), point(sel, false), m);
    for (uint32_t dst : waited_by(cur.index, sel)) draw_arrow(dl, point(sel, true), point(dst, false), m);
    dl->PopClipRect();
  }

  // Gestures.
  if (hovered && io.MouseWheel != 0) {
    out.push_back(ZoomAt{std::pow(0.85, static_cast<double>(io.MouseWheel)), view.to_ns(mouse_x, track_w)});
  }
  // The measured range stays until cleared (Esc, or "clear" in Statistics).
  if (state.range) draw_measure(*state.range, view, track_w, area_x, clip_min.y, clip_max.y, m);
  // Right-drag zooms to a range; shift-drag measures one (Δt and its
  // statistics), as do two shift-clicks.
  if (hovered && (ImGui::IsMouseClicked(ImGuiMouseButton_Right) || (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && io.KeyShift))) {
    ui.range_dragging = true;
    ui.range_measure = !ImGui::IsMouseClicked(ImGuiMouseButton_Right);
    ui.range_x0 = mouse_x;
  }
  if (ui.range_dragging) {
    float x0 = std::min(ui.range_x0, mouse_x), x1 = std::max(ui.range_x0, mouse_x);
    dl->AddRectFilled(ImVec2(area_x + x0, clip_min.y), ImVec2(area_x + x1, clip_max.y),
                      ui.range_measure ? IM_COL32(255, 220, 120, 50) : IM_COL32(120, 160, 255, 60));
    std::string span = (ui.range_measure ? "dt " : "") +
                       format_duration(static_cast<int64_t>((x1 - x0) * view.ns_per_px(track_w)));
    dl->AddText(ImVec2(area_x + x1 + m.text_pad, io.MousePos.y - ImGui::GetFontSize() - 3 * m.scale), kTextColor,
                span.c_str());
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left) && !ImGui::IsMouseDown(ImGuiMouseButton_Right)) {
      ui.range_dragging = false;
      const int64_t t0 = view.to_ns(x0, track_w), t1 = view.to_ns(x1, track_w);
      if (ui.range_measure && x1 - x0 > 3) {
        out.push_back(SetRange{t0, t1});
        ui.measure_anchor_set = false;
      } else if (ui.range_measure) {
        // A shift-click: the first sets one end, the second closes the range.
        if (ui.measure_anchor_set) {
          out.push_back(SetRange{std::min(ui.measure_anchor_ns, t0), std::max(ui.measure_anchor_ns, t0)});
        } else {
          ui.measure_anchor_ns = t0;
        }
        ui.measure_anchor_set = !ui.measure_anchor_set;
      } else if (x1 - x0 > 3) {
        out.push_back(ZoomTo{t0, t1});
      }
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
    tooltip_for(state, *hovered_row->run, *hovered_rect, ui);
  }
  dl->PopClipRect();
  if (!ui.headless) keyboard(state, out);
  ImGui::EndChild();
}

}  // namespace sl::gui
