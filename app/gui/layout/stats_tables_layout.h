#pragma once
// Where the Statistics tab puts its tables (streams, kernels, longest
// kernels): side by side while each keeps a readable width, else one under
// another at the panel's full width (a 900x600 window squashed the kernel
// table's eight columns to "st.." and "med..").

namespace sl::gui {

struct StatsTablesLayout {
  bool stacked = false;
  float streams_width = 0;   // 0 when the streams table is not shown (a measured range)
  float kernels_width = 0;
  float longest_width = 0;   // side by side: 0, the rest of the line
};

// `avail` is the panel's content width in pixels, `scale` the font scale.
StatsTablesLayout stats_tables_layout(float avail, float scale, bool with_streams);

}  // namespace sl::gui
