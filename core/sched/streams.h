#pragma once
// Stream numbering shared by lowering, backends, traces and the GUI.
// Compute stream N is number N (0 = main). Communication streams have their
// own numbers, starting at kCommStreamBase, so moving work between compute
// streams never renumbers them.

#include <cstdint>
#include <map>
#include <string>

namespace sl::sched {

constexpr int kMainStream = 0;
constexpr int kCommStreamBase = 100;

enum class StreamKind { kCompute, kCommunication };

inline StreamKind stream_kind(int stream) {
  return stream >= kCommStreamBase ? StreamKind::kCommunication : StreamKind::kCompute;
}
inline const char* stream_kind_name(StreamKind kind) {
  return kind == StreamKind::kCompute ? "compute" : "communication";
}

// User overrides from `--stream NAME=N` (or the GUI): instruction name ->
// stream number. "comm" on the command line means kCommStreamBase.
using StreamOverrides = std::map<std::string, int>;

}  // namespace sl::sched
