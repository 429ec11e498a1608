#include "app/cli/terminal.h"

#include <unistd.h>

namespace sl::cli {
namespace {

void append_hex(unsigned char c, std::string* out) {
  static const char kHex[] = "0123456789ABCDEF";
  *out += "\\x";
  *out += kHex[c >> 4];
  *out += kHex[c & 0xf];
}

}  // namespace

std::string escape_controls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      append_hex(c, &out);
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      append_hex(c, &out);  // U+0080..U+009F: C1 controls (CSI is U+009B)
      append_hex(static_cast<unsigned char>(text[++i]), &out);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void print_text(std::FILE* f, std::string_view text) {
  if (::isatty(::fileno(f))) {
    std::string safe = escape_controls(text);
    std::fwrite(safe.data(), 1, safe.size(), f);
  } else {
    std::fwrite(text.data(), 1, text.size(), f);
  }
}

}  // namespace sl::cli
