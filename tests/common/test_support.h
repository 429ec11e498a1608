#pragma once
// Helpers several test areas share: scratch directories, whole-file bytes,
// and hand-made trace events. Each area's own util header re-exports them.

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/sched/streams.h"
#include "core/trace/trace.h"

namespace sl::test_support {

// A fresh directory under the system temp dir, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sl_test_XXXXXX").string();
    path_ = mkdtemp(tmpl.data()) ? tmpl : std::string();
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
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

// Appends an event (correlation id = its position + 1) and returns its index.
inline uint32_t add_event(trace::Trace& t, int32_t device, int32_t stream, trace::EventKind kind,
                          const std::string& name, const std::string& instruction, int64_t start, int64_t end,
                          int64_t bytes = 0, int64_t flops = 0) {
  trace::Event e;
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

}  // namespace sl::test_support
