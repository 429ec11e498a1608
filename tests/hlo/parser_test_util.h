#pragma once
// Helpers shared by the parser and printer tests.

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "core/hlo/parser.h"
#include "core/hlo/parser_roundtrip.h"
#include "core/hlo/printer.h"

namespace sl::hlo::testing {

// Parses `text` and fails the test (with the diagnostics) on error.
inline Module parse_ok(std::string_view text, std::string_view file = "test.hlo") {
  Result<Module> result = parse_program(text, file);
  EXPECT_TRUE(result.is_ok()) << result.status().message();
  if (!result.is_ok()) return Module{};
  return std::move(result).value();
}

// Parses `text`, expects an error, and returns the message.
inline std::string parse_error(std::string_view text, std::string_view file = "test.hlo") {
  Result<Module> result = parse_program(text, file);
  EXPECT_FALSE(result.is_ok()) << "expected a parse error for:\n" << text;
  if (result.is_ok()) return {};
  EXPECT_EQ(result.status().code(), ErrorCode::kInvalidInput);
  return result.status().message();
}

inline const Instruction& instr(const Module& module, std::string_view computation, std::string_view name) {
  int c = module.find_computation(computation);
  EXPECT_GE(c, 0) << "no computation " << computation;
  static const Instruction kMissing;
  if (c < 0) return kMissing;
  const Computation& comp = module.computations[static_cast<size_t>(c)];
  int i = comp.find(name);
  EXPECT_GE(i, 0) << "no instruction " << name << " in " << computation;
  if (i < 0) return kMissing;
  return comp.instructions[static_cast<size_t>(i)];
}

// print -> parse gives an equal module, and printing is stable.
inline void expect_round_trip(const Module& module) {
  std::string printed = print_module(module);
  Result<Module> again = parse_program(printed, "printed.hlo");
  ASSERT_TRUE(again.is_ok()) << again.status().message() << "\nprinted:\n" << printed;
  EXPECT_EQ(module_difference(module, again.value()), "") << "printed:\n" << printed;
  EXPECT_EQ(print_module(again.value()), printed);
}

inline std::string data_path(std::string_view name) {
  return std::string(SL_SOURCE_DIR) + "/tests/data/hlo/" + std::string(name);
}

}  // namespace sl::hlo::testing
