#pragma once
// PNG files for screenshots (write) and for tests that check them (read),
// through stb_image / stb_image_write from Debian's libstb.

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace sl::gui {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgba;  // top row first, 4 bytes per pixel
  const uint8_t* pixel(int x, int y) const { return &rgba[(static_cast<size_t>(y) * width + x) * 4]; }
};

// OpenGL's glReadPixels returns the bottom row first: flip to top-first.
void flip_rows(Image& image);
Status write_png(const std::string& path, const Image& image);
Result<Image> read_png(const std::string& path);

}  // namespace sl::gui
