#include "app/gui/layout/timeline_layout.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "app/gui/layout/colors.h"

namespace sl::gui {

uint16_t fit_label(size_t text_len, float width_px, const LayoutOptions& options, bool* truncated) {
  *truncated = false;
  float room = width_px - 2 * options.label_pad_px;
  if (room <= 0 || options.char_px <= 0) return 0;
  auto fits = static_cast<size_t>(std::floor(room / options.char_px));
  if (fits >= text_len) return static_cast<uint16_t>(std::min<size_t>(text_len, 0xffff));
  // Truncated labels keep two characters for "..".
  if (fits < 5) return 0;
  *truncated = true;
  return static_cast<uint16_t>(std::min<size_t>(fits - 2, 0xffff));
}

std::string shorten_middle(const std::string& text, size_t keep) {
  if (text.size() <= keep + 2) return text;
  auto is_continuation = [&](size_t i) { return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; };
  size_t head = (keep + 1) / 2;
  size_t tail_from = text.size() - (keep - head);
  while (head > 0 && is_continuation(head)) --head;
  while (tail_from < text.size() && is_continuation(tail_from)) ++tail_from;
  return text.substr(0, head) + ".." + text.substr(tail_from);
}

const std::string& label_text(const trace::CompactTrace& trace, const trace::EventRef& e, bool prefer_instruction) {
  if (prefer_instruction && e.instruction != 0) return trace.instruction_of(e);
  return trace.name_of(e);
}

namespace {

// The kind with the most busy time among the block's events [p, q) and the
// block's busy fraction, exact from the track's per-kind prefix sums:
// O(kKindChunk) per block, however many events it holds.
void weigh_block(const trace::CompactTrace& trace, const Track& track, size_t p, size_t q, int64_t span_ns, DrawRect* r,
                 size_t* weighed) {
  int64_t by_kind[kKinds] = {};
  kind_time(trace, track, p, q, by_kind);
  *weighed += std::min<size_t>(q - p, 2 * kKindChunk);
  size_t best = static_cast<size_t>(trace.events[track.event(p)].kind);
  double busy = 0;
  for (size_t k = 0; k < kKinds; ++k) {
    if (by_kind[k] > by_kind[best]) best = k;
    busy += static_cast<double>(by_kind[k]);
  }
  r->kind = static_cast<trace::EventKind>(best);
  r->density = static_cast<float>(std::clamp(busy / static_cast<double>(std::max<int64_t>(1, span_ns)), 0.0, 1.0));
}

}  // namespace

TrackDraw layout_track(const trace::CompactTrace& trace, const TraceIndex& index, uint32_t track_id, const Viewport& view,
                       const LayoutOptions& options) {
  TrackDraw out;
  out.track = track_id;
  const Track& track = index.tracks[track_id];
  const float width = std::max(1.0f, options.width_px);
  const double ns_per_px = view.ns_per_px(width);
  // Merging works in time: an event shorter than min_ns is "tiny".
  const auto min_ns = static_cast<int64_t>(std::ceil(options.min_px * ns_per_px));
  const PosRange range = visible_range(trace, track, view.start_ns, view.end_ns);
  const auto& ev = trace.events;
  auto clip = [&](int64_t t) { return std::clamp(view.to_px(t, width), -1.0f, width + 1.0f); };
  auto highlighted = [&](uint32_t e) {
    return options.highlight != nullptr && e < options.highlight->size() && (*options.highlight)[e] != 0;
  };

  size_t p = range.first;
  while (p < range.last) {
    ++out.visited;
    const int64_t s = start_at(trace, track, p);
    const int64_t e = end_at(trace, track, p);
    const uint32_t event = track.event(p);
    if (e < view.start_ns) {  // overlapped by an earlier long event; not itself visible
      ++p;
      continue;
    }
    if (e - s >= min_ns) {
      DrawRect r;
      r.x0 = clip(s);
      r.x1 = clip(e);
      r.color = kind_color(ev[event].kind);
      r.kind = ev[event].kind;
      r.event = event;
      r.highlighted = highlighted(event);
      r.label_chars = fit_label(label_text(trace, ev[event], options.prefer_instruction).size(), r.x1 - std::max(r.x0, 0.0f), options,
                                &r.label_truncated);
      out.rects.push_back(r);
      ++p;
      continue;
    }
    // A tiny event: absorb every following event that ends within min_ns of
    // the block's end, and tiny neighbours separated by less than min_ns.
    int64_t block_end = e;
    size_t q = p + 1;
    bool any_highlight = highlighted(event);
    while (q < range.last) {
      auto next = static_cast<std::ptrdiff_t>(first_max_end_after(track, q, range.last, block_end + min_ns));
      if (static_cast<size_t>(next) > q) {
        block_end = std::max(block_end, track.max_end_ns[next - 1]);
        q = static_cast<size_t>(next);
        ++out.visited;
      }
      if (q >= range.last) break;
      const int64_t ns = start_at(trace, track, q);
      const int64_t ne = end_at(trace, track, q);
      if (ns - block_end > min_ns || ne - ns >= min_ns) break;  // a visible gap, or a wide event
      block_end = std::max(block_end, ne);
      any_highlight = any_highlight || highlighted(track.event(q));
      ++q;
      ++out.visited;
    }
    DrawRect r;
    r.x0 = clip(s);
    r.x1 = clip(block_end);
    if (r.x1 - r.x0 < 1.0f) r.x1 = r.x0 + 1.0f;  // at least one pixel so activity stays visible
    r.event = event;
    r.merged = static_cast<uint32_t>(q - p);
    r.kind = ev[event].kind;
    if (r.merged > 1) {
      weigh_block(trace, track, p, q, block_end - s, &r, &out.weighed);
      r.color = merged_color(r.kind, r.density);
    } else {
      r.color = kind_color(r.kind);
    }
    r.highlighted = any_highlight;
    out.rects.push_back(r);
    p = q;
  }
  return out;
}

std::vector<TrackDraw> layout_timeline(const trace::CompactTrace& trace, const TraceIndex& index, const Viewport& view,
                                       const LayoutOptions& options) {
  std::vector<TrackDraw> out;
  out.reserve(index.tracks.size());
  for (uint32_t t = 0; t < index.tracks.size(); ++t) out.push_back(layout_track(trace, index, t, view, options));
  return out;
}

}  // namespace sl::gui
