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

// The name XLA's runtime gives a stream (thunk_sequence.txt): XLA's extra
// compute streams are computation_stream[0..], its communication streams
// communication_stream[0..]; the main stream has no such name ("main").
inline std::string xla_stream_name(int stream) {
  if (stream == kMainStream) return "main";
  if (stream_kind(stream) == StreamKind::kCompute) return "computation_stream[" + std::to_string(stream - 1) + "]";
  return "communication_stream[" + std::to_string(stream - kCommStreamBase) + "]";
}

// User overrides from `--stream NAME=N` (or the GUI): instruction name ->
// stream number. "comm" on the command line means kCommStreamBase.
using StreamOverrides = std::map<std::string, int>;

}  // namespace sl::sched
