#include "app/gui/model/png_io.h"

#include <algorithm>
#include <cstring>

// libstb (Debian) provides the implementations; only the declarations here.
#include <stb_image.h>
#include <stb_image_write.h>

namespace sl::gui {

void flip_rows(Image& image) {
  const size_t row = static_cast<size_t>(image.width) * 4;
  for (int y = 0; y < image.height / 2; ++y) {
    uint8_t* a = &image.rgba[static_cast<size_t>(y) * row];
    uint8_t* b = &image.rgba[static_cast<size_t>(image.height - 1 - y) * row];
    std::swap_ranges(a, a + row, b);
  }
}

Status write_png(const std::string& path, const Image& image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgba.size() != static_cast<size_t>(image.width) * image.height * 4) {
    return runtime_error("no image to write to " + path);
  }
  if (stbi_write_png(path.c_str(), image.width, image.height, 4, image.rgba.data(), image.width * 4) == 0) {
    return runtime_error("cannot write " + path);
  }
  return ok_status();
}

Result<Image> read_png(const std::string& path) {
  int w = 0, h = 0, channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &w, &h, &channels, 4);
  if (data == nullptr) return invalid_input("cannot read image " + path + ": " + stbi_failure_reason());
  Image image;
  image.width = w;
  image.height = h;
  image.rgba.assign(data, data + static_cast<size_t>(w) * h * 4);
  stbi_image_free(data);
  return image;
}

}  // namespace sl::gui
