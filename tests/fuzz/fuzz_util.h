#pragma once
// Shared by the libFuzzer targets: the pipeline up to a lowered program, and
// the contract every target checks (an error is a Status with a message,
// never a crash, an exception or a hang).

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "core/hlo/parser.h"
#include "core/hlo/verifier.h"
#include "core/sched/lowering.h"

namespace sl::fuzz {

// Aborts (a finding) when a failure comes back without a message.
inline void check_error(const Status& status) {
  if (!status.is_ok() && status.message().empty()) {
    std::fprintf(stderr, "error without a message (code %d)\n", static_cast<int>(status.code()));
    std::abort();
  }
}

// Parse, verify and lower; nullopt when any step refuses the input.
inline std::optional<sched::LoweredProgram> lower_text(std::string_view text, hlo::Module* module) {
  Result<hlo::Module> parsed = hlo::parse_program(text, "fuzz.hlo");
  if (!parsed) {
    check_error(parsed.status());
    return std::nullopt;
  }
  *module = std::move(parsed).value();
  Status verified = hlo::verify_status(*module);
  if (!verified.is_ok()) {
    check_error(verified);
    return std::nullopt;
  }
  Result<sched::LoweredProgram> lowered = sched::lower(*module, sched::LowerOptions{});
  if (!lowered) {
    check_error(lowered.status());
    return std::nullopt;
  }
  return std::move(lowered).value();
}

}  // namespace sl::fuzz
