// libFuzzer target: the JSON writers (run_json, Chrome export, compare).
// The input supplies names and a run name as raw bytes (any UTF-8 damage)
// and event times; every writer must produce valid JSON, never throw.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "core/trace/compare.h"
#include "core/trace/export.h"
#include "core/trace/report.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

void expect_json(const std::string& text) {
  if (nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false).is_discarded()) {
    std::fprintf(stderr, "invalid JSON written: %.200s\n", text.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  sl::trace::Trace t;
  sl::trace::RunInfo info;
  info.name = bytes.substr(0, 16);
  // Each 24-byte record: 8 bytes start, 8 bytes end, 8 bytes of name.
  for (size_t at = 0; at + 24 <= size && t.events.size() < 64; at += 24) {
    sl::trace::Event e;
    std::memcpy(&e.start_ns, data + at, 8);
    std::memcpy(&e.end_ns, data + at + 8, 8);
    e.name = t.strings.intern(bytes.substr(at + 16, 8));
    e.instruction = t.strings.intern(bytes.substr(at + 20, 4));
    e.device = static_cast<int32_t>(data[at] % 3);
    e.stream = static_cast<int32_t>(data[at + 1] % 4);
    t.events.push_back(e);
  }
  if (t.events.size() > 1) t.dependencies.push_back({0, static_cast<uint32_t>(t.events.size() - 1)});
  expect_json(sl::trace::run_json(info, t));
  expect_json(sl::trace::chrome_trace_json(info, t));
  (void)sl::trace::trace_csv(t);
  expect_json(sl::trace::comparison_json(sl::trace::compare_runs(info, t, info, t)));
  return 0;
}
