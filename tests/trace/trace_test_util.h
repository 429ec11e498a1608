#pragma once
// Helpers shared by the trace tests: scratch files and hand-made traces.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/trace/trace.h"

namespace sl::trace::testing {

// A fresh directory under the system temp dir, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sl_trace_test_XXXXXX").string();
    path_ = mkdtemp(tmpl.data()) ? tmpl : std::string();
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Appends an event and returns its index.
inline uint32_t add_event(Trace& t, int32_t device, int32_t stream, EventKind kind, const std::string& name,
                          const std::string& instruction, int64_t start, int64_t end, int64_t bytes = 0,
                          int64_t flops = 0) {
  Event e;
  e.device = device;
  e.stream = stream;
  e.stream_kind = sched::stream_kind(stream);
  e.kind = kind;
  e.name = t.strings.intern(name);
  e.instruction = t.strings.intern(instruction);
  e.start_ns = start;
  e.end_ns = end;
  e.bytes = bytes;
  e.flops = flops;
  e.correlation = static_cast<int64_t>(t.events.size()) + 1;
  t.events.push_back(e);
  return static_cast<uint32_t>(t.events.size() - 1);
}

// A deterministic synthetic trace of n events over `devices` devices with
// three compute streams and one communication stream each.
inline Trace synthetic_trace(size_t n, int devices = 2) {
  Trace t;
  const char* names[] = {"gemm_bf16", "add_f32", "all_gather", "copy", "fusion.3"};
  EventKind kinds[] = {EventKind::kGemm, EventKind::kElementwise, EventKind::kCollective, EventKind::kCopy,
                       EventKind::kOther};
  t.events.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    int device = static_cast<int>(i % static_cast<size_t>(devices));
    size_t k = (i / static_cast<size_t>(devices)) % 5;
    int stream = k == 2 ? sched::kCommStreamBase : static_cast<int>(k % 3);
    int64_t start = static_cast<int64_t>(i) * 1000;
    add_event(t, device, stream, kinds[k], names[k], "instr." + std::to_string(i % 1000), start,
              start + 700 + static_cast<int64_t>(i % 17), static_cast<int64_t>(i) * 64, static_cast<int64_t>(i) * 3);
    t.events.back().iteration = static_cast<int32_t>(i / 100000);
  }
  return t;
}

}  // namespace sl::trace::testing
