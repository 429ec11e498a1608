#pragma once
// Helpers for the tests that start the GUI binary: tools on PATH, running a
// shell command with the GUI's own exit code echoed from inside (xvfb-run's
// status can be its own, e.g. 5 when two parallel xvfb-runs race while
// cleaning up /tmp), and colour searches in the screenshots it writes.

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/gui/layout/colors.h"
#include "app/gui/model/png_io.h"

#ifndef SL_GUI_EXECUTABLE
#define SL_GUI_EXECUTABLE SL_BINARY_DIR "/app/gui/streamlens-gui"
#endif

namespace sl::gui::testing {

inline bool have_tool(const std::string& tool) {
  return std::system(("command -v " + tool + " > /dev/null 2>&1").c_str()) == 0;
}
inline bool have_xvfb() { return have_tool("xvfb-run"); }

struct Outcome {
  int exit_code = -1;
  std::string output;
};

// Runs `cmd` (stderr joined to stdout); a "SL_GUI_EXIT=N" line in its output
// overrides the shell's status.
inline Outcome run_shell(const std::string& cmd) {
  Outcome out;
  FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.output.append(buf.data(), n);
  int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const std::string marker = "SL_GUI_EXIT=";
  if (size_t at = out.output.rfind(marker); at != std::string::npos) {
    out.exit_code = std::atoi(out.output.c_str() + at + marker.size());
  }
  return out;
}

// The GUI with `args` under a private X server; sanitizer leak checks are
// off because the GL driver (llvmpipe) keeps allocations until exit.
inline Outcome run_gui(const std::string& args) {
  return run_shell(std::string("ASAN_OPTIONS=detect_leaks=0 xvfb-run -a -s \"-screen 0 1600x900x24\" sh -c '") +
                   SL_GUI_EXECUTABLE + " " + args + "; echo SL_GUI_EXIT=$?'");
}

inline bool near(const uint8_t* p, Rgb c, int tol = 3) {
  return std::abs(p[0] - c.r) <= tol && std::abs(p[1] - c.g) <= tol && std::abs(p[2] - c.b) <= tol;
}

// Rows in which at least `min_pixels` pixels have colour `c`.
inline std::vector<int> rows_with(const Image& img, Rgb c, int min_pixels) {
  std::vector<int> rows;
  for (int y = 0; y < img.height; ++y) {
    int count = 0;
    for (int x = 0; x < img.width; ++x) count += near(img.pixel(x, y), c) ? 1 : 0;
    if (count >= min_pixels) rows.push_back(y);
  }
  return rows;
}

// Columns in which at least `min_pixels` pixels have colour `c`.
inline std::vector<int> columns_with(const Image& img, Rgb c, int min_pixels) {
  std::vector<int> cols;
  for (int x = 0; x < img.width; ++x) {
    int count = 0;
    for (int y = 0; y < img.height; ++y) count += near(img.pixel(x, y), c) ? 1 : 0;
    if (count >= min_pixels) cols.push_back(x);
  }
  return cols;
}

// Pixels of colour `c` (within 2 per channel) in the whole image.
inline int pixels_with(const Image& img, Rgb c) {
  int count = 0;
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) count += near(img.pixel(x, y), c, 2) ? 1 : 0;
  }
  return count;
}

}  // namespace sl::gui::testing
