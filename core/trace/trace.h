#pragma once
// The trace model every backend produces and every consumer reads
// (docs/architecture.md): events on (device, stream) tracks plus dependency edges
// for waits between streams. Names are interned so a million events stay
// small and load quickly.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/sched/streams.h"

namespace sl::trace {

using sched::StreamKind;

enum class EventKind : uint8_t { kGemm, kCollective, kElementwise, kCopy, kMemset, kWait, kOther };

const char* event_kind_name(EventKind kind);          // "gemm", "collective", ...
bool parse_event_kind(std::string_view name, EventKind* out);

class StringTable {
 public:
  // Looks `text` up without copying it (the tracer interns on every launch).
  uint32_t intern(std::string_view text);
  const std::string& get(uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }
  const std::vector<std::string>& all() const { return strings_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> strings_{""};  // id 0 is the empty string
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> ids_{{"", 0}};
};

// a - b, clamped to the int64 range: times from damaged files or extreme
// device models must give a wrong number, never undefined behaviour.
inline int64_t saturating_sub(int64_t a, int64_t b) {
  int64_t out = 0;
  if (!__builtin_sub_overflow(a, b, &out)) return out;
  return b < 0 ? INT64_MAX : INT64_MIN;
}
inline int64_t saturating_add(int64_t a, int64_t b) {
  int64_t out = 0;
  if (!__builtin_add_overflow(a, b, &out)) return out;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

// Packed into 64 bytes (a 10M-event run is 640 MB of these): the 32-bit
// fields first, and the stream kind (an int-sized enum) in one byte beside
// the event kind.
struct Event {
  int32_t device = 0;
  int32_t stream = 0;                       // see sched/streams.h
  StreamKind stream_kind : 8 = StreamKind::kCompute;
  EventKind kind = EventKind::kOther;
  uint32_t name = 0;                        // kernel or op name (interned)
  uint32_t instruction = 0;                 // instruction name without '%' (interned; 0 = none)
  int32_t iteration = 0;                    // --iterations index; 0 for single runs
  int64_t start_ns = 0;                     // from the run's first event
  int64_t end_ns = 0;
  int64_t bytes = 0;
  int64_t flops = 0;
  int64_t correlation = 0;                  // backend's id (CUPTI correlation id, thunk index)
  int64_t duration_ns() const { return saturating_sub(end_ns, start_ns); }
};
static_assert(sizeof(Event) == 64, "keep Event's fields packed");

// `to` could not start before `from` ended: a wait between streams (or a
// rendezvous). Indices into Trace::events.
struct Dependency {
  uint32_t from = 0;
  uint32_t to = 0;
};

// Named counters for odd or dropped records (STYLE item 5).
struct Counter {
  std::string name;
  int64_t value = 0;
  std::string description;
};

struct Trace {
  StringTable strings;
  std::vector<Event> events;
  std::vector<Dependency> dependencies;
  std::vector<Counter> counters;
  // The GPU that ran it, where the recording says (a capture's device
  // lines: "NVIDIA H100 80GB HBM3"); empty otherwise.
  std::string gpu_name;

  const std::string& name_of(const Event& e) const { return strings.get(e.name); }
  const std::string& instruction_of(const Event& e) const { return strings.get(e.instruction); }
  int64_t makespan_ns() const;  // last end - first start; 0 when empty
  void add_counter(std::string_view name, int64_t delta, std::string_view description);
  // Shift times so the first event starts at 0.
  void normalize_time();
};

}  // namespace sl::trace
