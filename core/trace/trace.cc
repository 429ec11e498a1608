#include "core/trace/trace.h"

#include <algorithm>
#include <array>
#include <limits>

namespace sl::trace {
namespace {
constexpr std::array<const char*, 7> kKindNames = {"gemm", "collective", "elementwise", "copy",
                                                   "memset", "wait", "other"};
}

const char* event_kind_name(EventKind kind) { return kKindNames[static_cast<size_t>(kind)]; }

bool parse_event_kind(std::string_view name, EventKind* out) {
  for (size_t i = 0; i < kKindNames.size(); ++i) {
    if (name == kKindNames[i]) {
      *out = static_cast<EventKind>(i);
      return true;
    }
  }
  return false;
}

uint32_t StringTable::intern(std::string_view text) {
  auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  auto id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(text);
  ids_.emplace(strings_.back(), id);
  return id;
}

int64_t Trace::makespan_ns() const {
  if (events.empty()) return 0;
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  for (const Event& e : events) {
    first = std::min(first, e.start_ns);
    last = std::max(last, e.end_ns);
  }
  return saturating_sub(last, first);
}

void Trace::add_counter(std::string_view name, int64_t delta, std::string_view description) {
  for (Counter& c : counters) {
    if (c.name == name) {
      c.value += delta;
      return;
    }
  }
  counters.push_back({std::string(name), delta, std::string(description)});
}

void Trace::normalize_time() {
  if (events.empty()) return;
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const Event& e : events) first = std::min(first, e.start_ns);
  for (Event& e : events) {
    e.start_ns = saturating_sub(e.start_ns, first);
    e.end_ns = saturating_sub(e.end_ns, first);
  }
}

}  // namespace sl::trace
