#pragma once
// Diagnostics a person can act on (STYLE item 3):
//   samples/x.hlo:12:7: error: message
//     %rs = f32[3] reduce-scatter(...)
//         ^

#include <string>
#include <string_view>
#include <vector>

#include "core/hlo/module.h"

namespace sl::hlo {

enum class Severity { kError, kWarning };

struct Diagnostic {
  Severity severity = Severity::kError;
  std::string file;
  SourceLoc loc;
  std::string message;
};

// "FILE:LINE:COL: error: message", then the source line and a caret when
// `source` holds that line.
std::string format_diagnostic(const Diagnostic& diagnostic, std::string_view source);
std::string format_diagnostics(const std::vector<Diagnostic>& diagnostics, std::string_view source);

}  // namespace sl::hlo
