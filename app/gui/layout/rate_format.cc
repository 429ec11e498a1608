#include "app/gui/layout/rate_format.h"

#include <array>
#include <cmath>

#include <fmt/format.h>

namespace sl::gui {

std::string format_rate(double per_second, const char* unit) {
  struct Prefix {
    double scale;
    const char* name;
  };
  constexpr std::array<Prefix, 5> kPrefixes = {{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  double value = per_second;
  const char* prefix = "";
  for (const Prefix& p : kPrefixes) {
    if (std::abs(per_second) >= p.scale) {
      value = per_second / p.scale;
      prefix = p.name;
      break;
    }
  }
  // Three significant digits; rounding 999.6 up to "1000" is fine at this precision.
  const int decimals = std::abs(value) >= 100 ? 0 : std::abs(value) >= 10 ? 1 : 2;
  return fmt::format("{:.{}f} {}{}", value, decimals, prefix, unit);
}

}  // namespace sl::gui
