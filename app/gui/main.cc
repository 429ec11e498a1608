// streamlens-gui: Dear ImGui + GLFW + OpenGL 3 (docs/gui.md).
//
//   streamlens-gui [DB] [--db F] [--run N] [--compare M] [--screenshot out.png]
//                  [--size 1600x900] [--script actions.txt] [--bench-frames N]
//                  [--font-scale S] [--log-actions FILE]
//
// Without a database it opens ./streamlens.db when there is one, else the
// most recent database that still exists.
// With --screenshot, --script or --bench-frames it runs headless: it carries
// out the script (waiting for reruns), writes the screenshot and exits;
// errors go to stderr with exit code 1 (bad database, run, script action),
// 2 (usage) or 3 (no display, cannot write the PNG).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <GLFW/glfw3.h>
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include "app/gui/model/app_state.h"
#include "app/gui/model/key_queue.h"
#include "app/gui/model/png_io.h"
#include "app/gui/model/recent_files.h"
#include "app/gui/model/script.h"
#include "app/gui/views/views.h"

namespace {

using namespace sl::gui;

constexpr int kExitOk = 0;
constexpr int kExitInvalid = 1;
constexpr int kExitUsage = 2;
constexpr int kExitRuntime = 3;
constexpr int kSettleFrames = 3;  // frames ImGui needs after a change before a screenshot is stable

struct Options {
  std::string db;
  int64_t run = 0;
  int64_t compare = 0;
  std::string screenshot;
  std::string size = "1600x900";
  std::string script;
  int bench_frames = 0;
  double font_scale = 1;
  std::string log_actions;
  int width = 1600, height = 900;
  bool headless() const { return !screenshot.empty() || !script.empty() || bench_frames > 0; }
};

bool parse_size(const std::string& text, int* w, int* h) {
  int x = 0, y = 0;
  char sep = 0;
  if (std::sscanf(text.c_str(), "%d%c%d", &x, &sep, &y) != 3 || (sep != 'x' && sep != 'X')) return false;
  if (x < 200 || y < 150 || x > 8192 || y > 8192) return false;
  *w = x;
  *h = y;
  return true;
}

sl::Status capture_png(GLFWwindow* window, const std::string& path) {
  int w = 0, h = 0;
  glfwGetFramebufferSize(window, &w, &h);
  Image image;
  image.width = w;
  image.height = h;
  image.rgba.resize(static_cast<size_t>(w) * h * 4);
  glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, image.rgba.data());
  for (size_t i = 3; i < image.rgba.size(); i += 4) image.rgba[i] = 255;  // the window is opaque
  flip_rows(image);
  return write_png(path, image);
}

// Carries out --script steps one frame at a time, waiting for reruns.
class ScriptDriver {
 public:
  ScriptDriver(std::vector<ScriptLine> lines, std::string script_name, std::string final_screenshot)
      : lines_(std::move(lines)), name_(std::move(script_name)), final_screenshot_(std::move(final_screenshot)) {}

  // Called once per frame after the frame's actions; returns false when finished.
  bool step(AppState& state, bool* quit) {
    // cancel-rerun and quit act on a running rerun: they do not wait for it.
    const bool acts_now = next_ < lines_.size() && acts_on_running_job(lines_[next_].step);
    // ...but they wait until the rerun has recorded its run, so what they cancel is always in the store.
    if (acts_now && state.job.active && state.job.progress->run_id == 0) return true;
    if (!acts_now && (state.busy() || state.stats_pending() || !state.pending_screenshot.empty())) return true;
    if (wait_ > 0) {
      --wait_;
      return true;
    }
    if (next_ < lines_.size()) {
      const ScriptLine& line = lines_[next_++];
      if (const auto* action = std::get_if<sl::gui::Action>(&line.step)) {
        apply(state, *action);
        current_line_ = line.line;
        wait_ = kSettleFrames;
      } else if (const auto* wait = std::get_if<WaitFrames>(&line.step)) {
        wait_ = wait->frames;
      } else if (const auto* shot = std::get_if<Screenshot>(&line.step)) {
        apply(state, ExportPng{shot->path});
        current_line_ = line.line;
      } else if (std::holds_alternative<QuitStep>(line.step)) {
        *quit = true;
        current_line_ = line.line;
      }
      return true;
    }
    if (!final_screenshot_.empty() && !final_done_) {
      final_done_ = true;
      apply(state, ExportPng{final_screenshot_});
      return true;
    }
    return false;
  }
  static bool acts_on_running_job(const ScriptStep& step) {
    if (std::holds_alternative<QuitStep>(step)) return true;
    const auto* action = std::get_if<sl::gui::Action>(&step);
    return action != nullptr && std::holds_alternative<CancelRerun>(*action);
  }
  std::string where() const { return current_line_ > 0 ? fmt::format("{}:{}: ", name_, current_line_) : ""; }

 private:
  std::vector<ScriptLine> lines_;
  std::string name_;
  std::string final_screenshot_;
  size_t next_ = 0;
  int wait_ = kSettleFrames;  // let the first frames lay out before anything else
  int current_line_ = 0;
  bool final_done_ = false;
};

void report_bench(const std::vector<double>& frame_ms, const std::vector<double>& cpu_ms, const AppState& state) {
  auto stats = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    return std::vector<double>{sum / static_cast<double>(v.size()), v[v.size() / 2], v[v.size() * 95 / 100],
                               v[v.size() * 99 / 100], v.back()};
  };
  auto f = stats(frame_ms), c = stats(cpu_ms);
  size_t events = state.current ? state.current->trace.events.size() : 0;
  std::printf("bench: %zu events, view %s, %zu frames\n", events,
              fmt::format("{}..{} ns", state.viewport.start_ns, state.viewport.end_ns).c_str(), frame_ms.size());
  std::printf("bench: frame ms  mean %.2f  p50 %.2f  p95 %.2f  p99 %.2f  max %.2f\n", f[0], f[1], f[2], f[3], f[4]);
  std::printf("bench: ui+layout ms  mean %.2f  p50 %.2f  p95 %.2f  p99 %.2f  max %.2f\n", c[0], c[1], c[2], c[3], c[4]);
  if (state.current) {
    const auto& r = *state.current;
    std::printf("bench: run opened in %.1f ms (CPU %.1f ms: read %.1f, index %.1f); statistics after it, CPU %.1f ms\n",
                r.load_ms, r.load_cpu_ms, r.read_cpu_ms, r.index_cpu_ms, r.stats_cpu_ms);
  }
}

// Key events pass through `g_keys` so a tap shorter than a frame still acts (key_queue.h).
KeyQueue g_keys;

void queue_key(GLFWwindow*, int key, int scancode, int action, int mods) {
  g_keys.push({key, scancode, action, mods});
}

void deliver_keys(GLFWwindow* window) {
  for (const KeyEvent& e : g_keys.take_frame()) ImGui_ImplGlfw_KeyCallback(window, e.key, e.scancode, e.action, e.mods);
}

// Font and sizes for --font-scale times the monitor's content scale (HiDPI).
float setup_scale(GLFWwindow* window, double font_scale) {
  float xs = 1, ys = 1;
  glfwGetWindowContentScale(window, &xs, &ys);
  const float scale = static_cast<float>(font_scale) * std::max(1.0f, std::max(xs, ys));
  ImFontConfig config;
  config.SizePixels = 13.0f * scale;
  ImGui::GetIO().Fonts->AddFontDefault(&config);
  ImGui::GetStyle().ScaleAllSizes(scale);
  return scale;
}

// The applied actions, one line each (--log-actions): a record of a session
// and what the input tests check. Polls are left out.
void log_actions(std::ofstream* log, const ActionQueue& actions) {
  if (log == nullptr) return;
  for (const Action& a : actions) {
    if (!std::holds_alternative<PollJob>(a)) *log << describe(a) << '\n';
  }
  log->flush();
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::string positional_db;
  CLI::App app{"streamlens-gui: timeline viewer, stream editor and run comparison"};
  app.add_option("database", positional_db, "streamlens database (.db)");
  app.add_option("--db", opt.db, "streamlens database (.db)");
  app.add_option("--run", opt.run, "run to open (default: the newest)");
  app.add_option("--compare", opt.compare, "baseline run to compare the open run with");
  app.add_option("--screenshot", opt.screenshot, "write a PNG of the window after the script, then exit");
  app.add_option("--size", opt.size, "window size WIDTHxHEIGHT")->capture_default_str();
  app.add_option("--script", opt.script, "actions to carry out, one per line (then exit)");
  app.add_option("--bench-frames", opt.bench_frames, "render N frames after the script and print ms/frame, then exit")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--font-scale", opt.font_scale, "scale fonts and sizes (times the monitor's content scale)")
      ->check(CLI::Range(0.5, 4.0))
      ->capture_default_str();
  app.add_option("--log-actions", opt.log_actions, "append every action the window applies to FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (opt.db.empty()) opt.db = positional_db;
  if (!parse_size(opt.size, &opt.width, &opt.height)) {
    std::fprintf(stderr, "error: --size must be WIDTHxHEIGHT (e.g. 1600x900), not '%s'\n", opt.size.c_str());
    return kExitUsage;
  }
  const bool headless = opt.headless();
  std::vector<ScriptLine> script;
  if (!opt.script.empty()) {
    sl::Result<std::vector<ScriptLine>> parsed = parse_script_file(opt.script);
    if (!parsed) {
      std::fprintf(stderr, "%s\n", parsed.status().message().c_str());
      return kExitUsage;
    }
    script = std::move(parsed).value();
  }
  if (headless && opt.db.empty()) {
    std::fprintf(stderr, "error: --screenshot, --script and --bench-frames need a database (--db FILE)\n");
    return kExitUsage;
  }

  AppState state;
  state.services = default_services();
  const std::string recent_path = headless ? "" : recent_files_path();
  state.recent_files = load_recent_files(recent_path);
  auto fail_headless = [&](const std::string& what) {
    std::fprintf(stderr, "error: %s\n", what.c_str());
    return kExitInvalid;
  };
  if (opt.db.empty() && !headless) {
    std::error_code ec;
    opt.db = startup_database(std::filesystem::current_path(ec).string(), state.recent_files);
  }
  if (!opt.db.empty()) {
    apply(state, OpenDatabase{opt.db});
    if (state.message.error && headless) return fail_headless(state.message.text);
  }
  if (state.store) {
    // The run loads on a worker while the window opens; headless runs and
    // --compare (which needs the run) wait for it here.
    if (opt.run > 0) {
      apply(state, OpenRun{opt.run});
    } else if (!state.runs.empty()) {
      int64_t newest = 0;
      for (const auto& r : state.runs) newest = std::max(newest, r.id);
      apply(state, OpenRun{newest});
    }
    if (headless || opt.compare > 0) wait_for_job(state);
    if (state.message.error && headless) return fail_headless(state.message.text);
    if (opt.compare > 0 && state.current) {
      apply(state, Compare{opt.compare});
      if (headless) wait_for_job(state);
      if (state.message.error && headless) return fail_headless(state.message.text);
    }
  }

  if (glfwInit() == GLFW_FALSE) {
    std::fprintf(stderr, "error: cannot open a window (no display? run it under xvfb-run for headless use)\n");
    return kExitRuntime;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GL_TRUE);
  if (headless) glfwWindowHint(GLFW_RESIZABLE, GLFW_FALSE);
  GLFWwindow* window = glfwCreateWindow(opt.width, opt.height, "streamlens", nullptr, nullptr);
  if (window == nullptr) {
    std::fprintf(stderr, "error: cannot create an OpenGL 3.3 window\n");
    glfwTerminate();
    return kExitRuntime;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(headless ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is fixed; nothing to remember
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  glfwSetKeyCallback(window, queue_key);  // replaces ImGui's, which deliver_keys calls
  ImGui_ImplOpenGL3_Init("#version 150");

  UiState ui;
  ui.headless = headless;
  ui.scale = setup_scale(window, opt.font_scale);
  std::ofstream action_log;
  if (!opt.log_actions.empty()) action_log.open(opt.log_actions, std::ios::app);
  ScriptDriver driver(std::move(script), opt.script, opt.screenshot);
  int exit_code = kExitOk;
  bool script_done = !headless;
  std::vector<double> frame_ms, cpu_ms;
  std::string last_error;

  while (!glfwWindowShouldClose(window) && !ui.quit_requested) {
    auto frame_start = std::chrono::steady_clock::now();
    if (headless || state.busy() || state.stats_pending() || !g_keys.empty() || !state.cancelled_reruns.empty()) {
      glfwPollEvents();
    } else {
      glfwWaitEventsTimeout(0.25);  // idle without spinning; wakes on input
    }
    deliver_keys(window);
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    ActionQueue actions;
    show_main_window(state, ui, actions);
    ImGui::Render();
    auto cpu_end = std::chrono::steady_clock::now();
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    glViewport(0, 0, fb_w, fb_h);
    glClearColor(0.08f, 0.08f, 0.10f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (!state.pending_screenshot.empty()) {
      sl::Status written = capture_png(window, state.pending_screenshot);
      actions.push_back(ScreenshotDone{state.pending_screenshot, written.is_ok(), written.message()});
      if (!written.is_ok() && headless) {
        std::fprintf(stderr, "error: %s\n", written.message().c_str());
        exit_code = kExitRuntime;
        break;
      }
    }
    glfwSwapBuffers(window);
    if (script_done && opt.bench_frames > 0) {
      // glFinish makes the measured frame include the GPU (llvmpipe) work.
      glFinish();
      auto end = std::chrono::steady_clock::now();
      frame_ms.push_back(std::chrono::duration<double, std::milli>(end - frame_start).count());
      cpu_ms.push_back(std::chrono::duration<double, std::milli>(cpu_end - frame_start).count());
      if (static_cast<int>(frame_ms.size()) >= opt.bench_frames) break;
    }

    actions.push_back(PollJob{});
    log_actions(action_log.is_open() ? &action_log : nullptr, actions);
    for (const Action& action : actions) apply(state, action);
    if (headless && !script_done) {
      script_done = !driver.step(state, &ui.quit_requested);
      if (state.message.error && state.message.text != last_error) {
        std::fprintf(stderr, "%serror: %s\n", driver.where().c_str(), state.message.text.c_str());
        exit_code = kExitInvalid;
        break;
      }
      if (script_done && opt.bench_frames == 0) break;
    }
    if (state.message.error) last_error = state.message.text;
  }
  if (!frame_ms.empty()) report_bench(frame_ms, cpu_ms, state);
  // Quitting never waits for a rerun: it is cancelled and its run marked
  // interrupted (a cpu operation cannot be stopped midway, so its thread is
  // left behind and the process ends without joining it).
  if (state.job.active) {
    cancel_for_quit(state);
    std::fprintf(stderr, "%s\n", state.message.text.c_str());
  }
  if (!headless) save_recent_files(recent_path, state.recent_files);
  action_log.close();

  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  if (state.busy() || !state.cancelled_reruns.empty() || state.stats_pending()) {
    // Workers still running: destroying their futures would wait for them.
    // SQLite's journal keeps the database whole whatever they were doing.
    std::fflush(nullptr);
    std::_Exit(exit_code);
  }
  return exit_code;
}
