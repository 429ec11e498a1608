#include "app/gui/layout/time_format.h"

#include <fmt/format.h>

namespace sl::gui {
namespace {

uint64_t magnitude(int64_t ns) {
  return ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
}

// `digits` decimals of `fraction`, grouped by three from the decimal point.
std::string grouped_fraction(uint64_t fraction, int digits) {
  std::string raw = fmt::format("{:0{}}", fraction, digits);
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (i > 0 && i % 3 == 0) out += ' ';
    out += raw[i];
  }
  return out;
}

}  // namespace

std::string group_digits(uint64_t value) {
  std::string raw = fmt::format("{}", value);
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (i > 0 && (raw.size() - i) % 3 == 0) out += ' ';
    out += raw[i];
  }
  return out;
}

std::string format_time_exact(int64_t ns) {
  const uint64_t a = magnitude(ns);
  return fmt::format("{}{}.{} s", ns < 0 ? "-" : "", group_digits(a / 1000000000),
                     grouped_fraction(a % 1000000000, 9));
}

std::string format_time_us(int64_t ns) {
  const uint64_t a = magnitude(ns);
  return fmt::format("{}{}.{} s", ns < 0 ? "-" : "", group_digits(a / 1000000000),
                     grouped_fraction(a % 1000000000 / 1000, 6));
}

std::string format_duration_exact(int64_t ns) {
  const uint64_t a = magnitude(ns);
  const char* sign = ns < 0 ? "-" : "";
  if (a < 1000) return fmt::format("{}{} ns", sign, a);
  if (a < 1000000) return fmt::format("{}{}.{} \xC2\xB5s", sign, a / 1000, grouped_fraction(a % 1000, 3));
  if (a < 1000000000) return fmt::format("{}{}.{} ms", sign, a / 1000000, grouped_fraction(a % 1000000, 6));
  return fmt::format("{}{}.{} s", sign, group_digits(a / 1000000000), grouped_fraction(a % 1000000000, 9));
}

}  // namespace sl::gui
