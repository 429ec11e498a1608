#pragma once
// Exact times for the Details panel and measurements: every nanosecond
// shown, digits grouped by three so "7.150 123 456 s" reads at a glance
// (format_duration's three significant digits hide an 89 µs kernel's
// start among others at 7.15 s).

#include <cstdint>
#include <string>

namespace sl::gui {

// A point in time in seconds with all nine decimals: "7.150 123 456 s",
// "-0.000 000 010 s".
std::string format_time_exact(int64_t ns);

// A duration to the nanosecond in the best unit: "89.123 µs", "812 ns",
// "1.240 000 017 s", "3.000 000 ms"; trailing digits are kept, never rounded.
std::string format_duration_exact(int64_t ns);

// A point in time to the microsecond, for lists: "2.130 255 s".
std::string format_time_us(int64_t ns);

// "12 345 678": digits grouped by three with thin spacing (plain spaces).
std::string group_digits(uint64_t value);

}  // namespace sl::gui
