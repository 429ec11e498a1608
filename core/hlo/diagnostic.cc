#include "core/hlo/diagnostic.h"

#include <algorithm>

namespace sl::hlo {
namespace {

std::string_view source_line(std::string_view source, int line) {
  if (line <= 0) return {};
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    size_t nl = source.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
  }
  size_t end = source.find('\n', start);
  return source.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
}

}  // namespace

std::string format_diagnostic(const Diagnostic& d, std::string_view source) {
  std::string out = d.file.empty() ? std::string("<input>") : d.file;
  out += ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": ";
  out += d.severity == Severity::kError ? "error: " : "warning: ";
  out += d.message;
  std::string_view line = source_line(source, d.loc.line);
  if (!line.empty() && d.loc.col > 0) {
    // A huge line (a 10 MB constant) is echoed only around the caret.
    constexpr size_t kBefore = 80, kAfter = 80;
    const size_t caret = std::min(static_cast<size_t>(d.loc.col - 1), line.size());
    const size_t from = caret > kBefore ? caret - kBefore : 0;
    const size_t to = std::min(line.size(), caret + kAfter);
    const std::string_view prefix = from > 0 ? "..." : "";
    out += "\n";
    out += prefix;
    out += line.substr(from, to - from);
    if (to < line.size()) out += "...";
    out += "\n";
    out.append(prefix.size(), ' ');
    // Keep tabs so the caret lines up under tabbed source.
    for (size_t i = from; i < caret; ++i) out += line[i] == '\t' ? '\t' : ' ';
    out += "^";
  }
  return out;
}

std::string format_diagnostics(const std::vector<Diagnostic>& diagnostics, std::string_view source) {
  std::string out;
  for (const Diagnostic& d : diagnostics) {
    if (!out.empty()) out += "\n";
    out += format_diagnostic(d, source);
  }
  return out;
}

}  // namespace sl::hlo
