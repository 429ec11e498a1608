#pragma once
// Helpers for the verifier tests: parse HLO text, verify it, and find a
// diagnostic at the place where a given snippet starts in the text.

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/hlo/diagnostic.h"
#include "core/hlo/parser.h"
#include "core/hlo/verifier.h"

namespace sl::hlo::testing {

inline constexpr std::string_view kFile = "t.hlo";

// 1-based line and column of the first occurrence of `needle` in `text`.
inline SourceLoc locate(std::string_view text, std::string_view needle) {
  size_t pos = text.find(needle);
  if (pos == std::string_view::npos) return {};
  SourceLoc loc{1, 1};
  for (size_t i = 0; i < pos; ++i) {
    if (text[i] == '\n') {
      ++loc.line;
      loc.col = 1;
    } else {
      ++loc.col;
    }
  }
  return loc;
}

inline Module parse_or_die(std::string_view text) {
  Result<Module> module = parse_program(text, kFile);
  EXPECT_TRUE(module.is_ok()) << module.status().message();
  if (!module.is_ok()) return Module{};
  return std::move(module).value();
}

inline std::string dump(const std::vector<Diagnostic>& diagnostics, std::string_view text) {
  return diagnostics.empty() ? std::string("(no diagnostics)") : format_diagnostics(diagnostics, text);
}

// Expects the text to parse and to verify with no diagnostics.
inline void expect_valid(std::string_view text) {
  Module module = parse_or_die(text);
  if (module.computations.empty()) return;  // parse failure already reported
  std::vector<Diagnostic> diagnostics = verify(module);
  EXPECT_TRUE(diagnostics.empty()) << dump(diagnostics, text);
}

// Expects an error at the start of `at` (an instruction's "%name") whose
// message contains `message`.
inline void expect_error_in(const Module& module, std::string_view text, std::string_view at,
                            std::string_view message) {
  const SourceLoc where = locate(text, at);
  ASSERT_GT(where.line, 0) << "test bug: '" << at << "' is not in the text";
  std::vector<Diagnostic> diagnostics = verify(module);
  bool found = false;
  for (const Diagnostic& d : diagnostics) {
    if (d.loc.line == where.line && d.loc.col == where.col && d.message.find(message) != std::string::npos &&
        d.file == kFile && d.severity == Severity::kError) {
      found = true;
    }
  }
  EXPECT_TRUE(found) << "expected an error at " << where.line << ":" << where.col << " containing\n  " << message
                     << "\ngot:\n"
                     << dump(diagnostics, text);
}

inline void expect_error(std::string_view text, std::string_view at, std::string_view message) {
  Module module = parse_or_die(text);
  if (module.computations.empty()) return;
  expect_error_in(module, text, at, message);
}

}  // namespace sl::hlo::testing
