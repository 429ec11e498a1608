// libFuzzer target: device JSON files. Any text is refused with a message or
// gives a model whose values a simulation may use.

#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/device_model.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto model = sl::sim::parse_device_model(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
  if (!model) sl::fuzz::check_error(model.status());
  return 0;
}
