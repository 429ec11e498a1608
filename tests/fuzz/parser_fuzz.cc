// libFuzzer target: any input either fails to parse with an error Status or
// parses to a module that prints and parses back to an equal module.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/hlo/parser.h"
#include "core/hlo/parser_roundtrip.h"
#include "core/hlo/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  sl::Result<sl::hlo::Module> module = sl::hlo::parse_program(text, "fuzz.hlo");
  if (!module.is_ok()) {
    if (module.status().code() != sl::ErrorCode::kInvalidInput || module.status().message().empty()) std::abort();
    return 0;
  }
  std::string printed = sl::hlo::print_module(module.value());
  sl::Result<sl::hlo::Module> again = sl::hlo::parse_program(printed, "printed.hlo");
  if (!again.is_ok()) {
    std::fprintf(stderr, "printed module does not parse:\n%s\n%s\n", again.status().message().c_str(), printed.c_str());
    std::abort();
  }
  std::string difference = sl::hlo::module_difference(module.value(), again.value());
  if (!difference.empty()) {
    std::fprintf(stderr, "round trip changed the module: %s\n%s\n", difference.c_str(), printed.c_str());
    std::abort();
  }
  return 0;
}
