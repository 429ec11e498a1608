#pragma once
// core/trace/analysis.h's busy time, overlap and critical path computed over
// a TraceIndex instead of copies of the events: the index already holds each
// track in start order and the waits sorted, so a 10M-event run needs no
// interval lists or per-event adjacency (which cost ~32 bytes an event at
// the statistics' peak). The results equal core's (tests/gui/scale_model_test.cc).

#include <vector>

#include "app/gui/layout/track_index.h"
#include "core/trace/analysis.h"
#include "core/trace/compact_trace.h"

namespace sl::gui {

std::vector<trace::StreamBusy> indexed_stream_busy(const trace::CompactTrace& trace, const TraceIndex& index);
trace::OverlapReport indexed_overlap(const trace::CompactTrace& trace, const TraceIndex& index);
trace::CriticalPath indexed_critical_path(const trace::CompactTrace& trace, const TraceIndex& index);

}  // namespace sl::gui
