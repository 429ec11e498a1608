#include "app/gui/layout/stats_tables_layout.h"

#include <algorithm>

namespace sl::gui {
namespace {
// Narrowest readable widths at scale 1: the kernel table's eight columns,
// the streams table's three, the longest kernels' four.
constexpr float kMinStreams = 200;
constexpr float kMinKernels = 560;
constexpr float kMinLongest = 300;
}  // namespace

StatsTablesLayout stats_tables_layout(float avail, float scale, bool with_streams) {
  const float s = std::max(scale, 1.0f);
  StatsTablesLayout l;
  const float need = (with_streams ? kMinStreams * s : 0) + kMinKernels * s + kMinLongest * s;
  if (avail < need) {
    l.stacked = true;
    l.streams_width = with_streams ? avail : 0;
    l.kernels_width = avail;
    l.longest_width = avail;
    return l;
  }
  // Side by side, in the proportions the tab always used.
  l.streams_width = with_streams ? avail * 0.22f : 0;
  l.kernels_width = avail * (with_streams ? 0.48f : 0.6f);
  l.longest_width = 0;  // the rest of the line
  return l;
}

}  // namespace sl::gui
