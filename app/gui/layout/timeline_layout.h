#pragma once
// Draw lists for the timeline, computed before any ImGui call (STYLE item 7).
// Per track, only the events inside the viewport are visited; events
// narrower than `min_px` are merged with their tiny neighbours into one block
// found by binary search on the track's running maximum end, so a track
// costs O(visible blocks * log n), never O(n): a million events stay within
// a frame budget at any zoom.

#include <cstdint>
#include <string>
#include <vector>

#include "app/gui/layout/track_index.h"
#include "app/gui/layout/viewport.h"
#include "core/trace/compact_trace.h"

namespace sl::gui {

struct LayoutOptions {
  float width_px = 1000;     // width of the track area
  float min_px = 3;          // narrower events are merged
  float char_px = 7;         // advance of one label character (ImGui's default font is 7 px)
  float label_pad_px = 4;    // space left and right of a label
  bool prefer_instruction = false;  // label by instruction (linked runs), see label_text
  const std::vector<uint8_t>* highlight = nullptr;  // per event: flagged (compare mode)
};

struct DrawRect {
  float x0 = 0, x1 = 0;        // pixels from the track area's left edge, clipped to [0, width]
  uint32_t color = 0;          // packed as IM_COL32
  int64_t event = -1;          // event index; for merged blocks the first event
  uint32_t merged = 1;         // number of events this rect stands for (> 1: a merged block)
  trace::EventKind kind = trace::EventKind::kOther;  // merged blocks: the kind with the most time
  float density = 1;           // merged blocks: busy time / span
  uint16_t label_chars = 0;    // characters of the name to draw (0: no label)
  bool label_truncated = false;// shorten the name to "label_chars" characters around ".." 
  bool highlighted = false;
};

struct TrackDraw {
  uint32_t track = 0;          // index into TraceIndex::tracks
  std::vector<DrawRect> rects;
  size_t visited = 0;          // events looked at (for tests of the cost bound)
  size_t weighed = 0;          // events scanned for merged blocks' kinds (<= 2 * kKindChunk each)
};

TrackDraw layout_track(const trace::CompactTrace& trace, const TraceIndex& index, uint32_t track, const Viewport& view,
                       const LayoutOptions& options);
std::vector<TrackDraw> layout_timeline(const trace::CompactTrace& trace, const TraceIndex& index, const Viewport& view,
                                       const LayoutOptions& options);

// How many characters of `text_len` fit in `width_px` (0 when fewer than 3);
// sets *truncated when not all of them fit.
uint16_t fit_label(size_t text_len, float width_px, const LayoutOptions& options, bool* truncated);

// `text` cut to `keep` characters with ".." in the middle, so kernel names
// that differ only at the end (nvjet_..._v_bz_TNN vs _TNT) stay apart;
// returned unchanged when it fits. UTF-8 sequences are never split.
std::string shorten_middle(const std::string& text, size_t keep);

// The name a timeline label shows: for runs linked to an XLA module the
// instruction (what the program calls it), else the kernel's name.
const std::string& label_text(const trace::CompactTrace& trace, const trace::EventRef& e, bool prefer_instruction);

}  // namespace sl::gui
