// The GUI's model at scale, without a window or a GL stack (whose ~290 MB
// under llvmpipe would hide the per-event cost): opens a run through the
// same actions as the window, then reports the open time, the peak RSS and
// bytes per event, the timeline layout's CPU time per frame at three zooms,
// and the worker-side range statistics and search times.
//
//   streamlens-gui-model-bench DB [--run N] [--frames 200]

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/gui/layout/timeline_layout.h"
#include "app/gui/model/app_state.h"

namespace {

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

double since_ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Polls as the window does (one PollJob per "frame") until `done`.
template <typename Done>
void poll_until(sl::gui::AppState& state, Done done) {
  while (!done()) {
    sl::gui::apply(state, sl::gui::PollJob{});
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string db;
  int64_t run = 1;
  int frames = 200;
  CLI::App app{"streamlens-gui-model-bench: the GUI model's open time, memory and layout cost on one run"};
  app.add_option("db", db, "database")->required()->check(CLI::ExistingFile);
  app.add_option("--run", run, "run id")->capture_default_str();
  app.add_option("--frames", frames, "layouts per zoom")->check(CLI::Range(1, 100000))->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  using namespace sl::gui;
  AppState state;
  state.services = default_services();
  const double rss0 = peak_rss_mb();
  apply(state, OpenDatabase{db});
  if (state.message.error) {
    std::fprintf(stderr, "error: %s\n", state.message.text.c_str());
    return 1;
  }
  auto t0 = std::chrono::steady_clock::now();
  apply(state, OpenRun{run});
  poll_until(state, [&] { return !state.load.active; });
  const double open_ms = since_ms(t0);
  if (!state.current) {
    std::fprintf(stderr, "error: %s\n", state.message.text.c_str());
    return 1;
  }
  const double rss_open = peak_rss_mb();
  poll_until(state, [&] { return !state.stats_pending(); });
  const double stats_ms = since_ms(t0) - open_ms;
  const LoadedRun& r = *state.current;
  const auto n = static_cast<double>(r.trace.events.size());
  std::printf("events %zu on %zu tracks\n", r.trace.events.size(), r.index.tracks.size());
  std::printf("open %.0f ms wall (CPU %.0f: read %.0f, index %.0f); statistics %.0f ms later (CPU %.0f)\n", open_ms,
              r.load_cpu_ms, r.read_cpu_ms, r.index_cpu_ms, stats_ms, r.stats_cpu_ms);
  const double rss_stats = peak_rss_mb();
  std::printf("peak RSS %.0f MB before opening, %.0f MB once open, %.0f MB with statistics: %.1f B/event\n", rss0,
              rss_open, rss_stats, (rss_stats - rss0) * 1048576.0 / n);

  struct Zoom {
    const char* name;
    int64_t divisor;
  };
  const int64_t begin = r.index.begin_ns, span = std::max<int64_t>(1, r.index.end_ns - r.index.begin_ns);
  for (Zoom z : {Zoom{"full", 1}, Zoom{"mid", 100}, Zoom{"deep", 100000}}) {
    const int64_t start = z.divisor == 1 ? begin : begin + span / 2;
    const Viewport view{start, start + std::max<int64_t>(1000, span / z.divisor)};
    LayoutOptions options;
    options.width_px = 1400;
    std::vector<double> ms;
    size_t rects = 0;
    for (int f = 0; f < frames; ++f) {
      const double c0 = thread_cpu_ms();
      std::vector<TrackDraw> draw = layout_timeline(r.trace, r.index, view, options);
      ms.push_back(thread_cpu_ms() - c0);
      rects = 0;
      for (const auto& t : draw) rects += t.rects.size();
    }
    std::sort(ms.begin(), ms.end());
    std::printf("layout %-4s (1/%lld of the run): %zu rects, CPU ms p50 %.3f p99 %.3f max %.3f\n", z.name,
                static_cast<long long>(z.divisor), rects, ms[ms.size() / 2], ms[ms.size() * 99 / 100], ms.back());
  }

  // A range over the middle half (a shift-drag): computed on a worker.
  t0 = std::chrono::steady_clock::now();
  const double ui0 = thread_cpu_ms();
  apply(state, SetRange{begin + span / 4, begin + 3 * span / 4});
  const double ui_ms = thread_cpu_ms() - ui0;
  poll_until(state, [&] { return !state.range_pending(); });
  std::printf("range statistics (half the run, %lld events): %.0f ms on a worker, %.2f ms on the UI thread\n",
              static_cast<long long>(state.range->events), since_ms(t0), ui_ms);
  t0 = std::chrono::steady_clock::now();
  apply(state, Search{"kernel_3"});
  std::printf("search 'kernel_3': %zu hits in %.0f ms\n", state.search_hits.size(), since_ms(t0));
  std::printf("peak RSS at the end %.0f MB: %.1f B/event\n", peak_rss_mb(), (peak_rss_mb() - rss0) * 1048576.0 / n);
  return 0;
}
