#pragma once
// The synthetic trace the store and query benchmarks share.

#include <cstdint>
#include <string>
#include <vector>

#include "core/sched/streams.h"
#include "core/trace/trace.h"

namespace sl::bench {

// A capture-like trace: 2 devices, 3 compute streams and one communication
// stream each, ~2000 distinct kernel names and instruction names.
inline trace::Trace capture_like_trace(int64_t n) {
  using namespace sl::trace;
  Trace t;
  t.events.reserve(static_cast<size_t>(n));
  const EventKind kinds[] = {EventKind::kGemm, EventKind::kElementwise, EventKind::kCollective, EventKind::kCopy};
  std::vector<int64_t> clock(8, 0);
  for (int64_t i = 0; i < n; ++i) {
    Event e;
    e.device = static_cast<int32_t>(i % 2);
    int k = static_cast<int>((i / 2) % 4);
    e.kind = kinds[k];
    e.stream = k == 2 ? sl::sched::kCommStreamBase : k % 3;
    e.stream_kind = sl::sched::stream_kind(e.stream);
    e.name = t.strings.intern("kernel_" + std::to_string(i % 997));
    e.instruction = t.strings.intern("instr." + std::to_string(i % 1009));
    int64_t& c = clock[static_cast<size_t>(e.device * 4 + k)];
    e.start_ns = c + 50;
    e.end_ns = e.start_ns + 1000 + (i % 300);
    c = e.end_ns;
    e.bytes = (i % 7) * 4096;
    e.flops = (i % 5) * 1000000;
    e.correlation = i + 1;
    t.events.push_back(e);
  }
  for (uint32_t i = 0; i + 3 < static_cast<uint32_t>(n); i += 50) t.dependencies.push_back({i, i + 3});
  return t;
}

}  // namespace sl::bench
