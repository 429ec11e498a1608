#pragma once
// Achieved rates with an SI prefix chosen by size, three significant digits:
// a small fusion's 576 flops in 860 ns is "670 MFLOP/s", not "0.0 TFLOP/s".

#include <string>

namespace sl::gui {

// `per_second` of `unit` ("FLOP/s", "B/s"): "812 TFLOP/s", "1.20 TB/s", "670 MFLOP/s".
std::string format_rate(double per_second, const char* unit);

}  // namespace sl::gui
