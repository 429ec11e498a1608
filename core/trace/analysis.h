#pragma once
// Pure analyses of a Trace (no SQLite): stream busy time, HTA-style
// compute/communication overlap, critical path, per-kernel statistics.
// Used by `show`, `compare`, the GUI's statistics panel and calibration.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/trace/trace.h"

namespace sl::trace {

struct CompactTrace;  // compact_trace.h

// Length of the union of half-open intervals [start, end); empty or
// inverted intervals count nothing. The vector is sorted in place.
int64_t union_length(std::vector<std::pair<int64_t, int64_t>>& intervals);

struct StreamBusy {
  int32_t device = 0;
  int32_t stream = 0;
  StreamKind stream_kind = StreamKind::kCompute;
  int64_t busy_ns = 0;      // union of the stream's event intervals
  int64_t event_count = 0;
};
// One entry per (device, stream) that has events, sorted by (device, stream).
std::vector<StreamBusy> stream_busy_time(const Trace& trace);

// The time a device ran nothing between its first start and its last end:
// in a measured step, the GPU waiting for the host (launches, syncs, the
// framework's dispatch). A step whose time moves with its idle time and not
// its busy time moved by the host's pace, not by its kernels.
struct DeviceIdle {
  int32_t device = 0;
  int64_t span_ns = 0;  // first start to last end of the device's events
  int64_t busy_ns = 0;  // union of its events' intervals, all streams together
  int64_t idle_ns() const { return span_ns - busy_ns; }
};
// One entry per device that has events, sorted by device.
std::vector<DeviceIdle> device_idle_time(const Trace& trace);

// Holistic Trace Analysis's definition: overlap = time spent computing while
// communicating / time spent communicating. Compute: events on compute
// streams of kind gemm, elementwise, copy or other. Communication: events of
// kind collective (on any stream).
struct DeviceOverlap {
  int32_t device = 0;
  int64_t compute_ns = 0;        // union of compute intervals
  int64_t communication_ns = 0;  // union of communication intervals
  int64_t overlap_ns = 0;        // |compute ∩ communication|
  double ratio = 0.0;            // overlap / communication; 0 without communication
};
struct OverlapReport {
  std::vector<DeviceOverlap> devices;  // sorted by device
  int64_t compute_ns = 0;              // sums over devices
  int64_t communication_ns = 0;
  int64_t overlap_ns = 0;
  double ratio = 0.0;                  // overall: sum overlap / sum communication
};
OverlapReport compute_communication_overlap(const Trace& trace);
bool is_compute_event(const Event& e);
bool is_communication_event(const Event& e);

// The chain that decides the makespan: from the last-ending event, repeatedly
// step to the latest-ending predecessor, where the predecessors of an event
// are the previous event on its (device, stream) and the sources of its
// dependency edges. Ties prefer the dependency edge's source (first listed),
// then the same-stream predecessor.
struct CriticalPath {
  std::vector<uint32_t> events;  // indices into Trace::events, earliest first
  int64_t start_ns = 0;          // start of the first event on the path
  int64_t end_ns = 0;            // end of the last event on the path
  int64_t busy_ns = 0;           // sum of the path events' durations
  int64_t length_ns() const { return saturating_sub(end_ns, start_ns); }
};
CriticalPath critical_path(const Trace& trace);

// The walk behind critical_path, for callers that keep their own
// predecessor structures (the GUI's compact track index): from the event
// that ends last, step to the candidate ending latest (the first on ties)
// among those `predecessors(cur, consider)` passes to `consider`, skipping
// any seen or ending after `cur`. `Events` is std::vector<Event> or a
// compact trace's EventColumns (anything with size() and operator[] giving
// start_ns, end_ns and duration_ns()).
template <typename Events>
CriticalPath walk_critical_path(const Events& ev,
                                const std::function<void(uint32_t cur, const std::function<void(uint32_t)>& consider)>&
                                    predecessors) {
  CriticalPath path;
  if (ev.empty()) return path;
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  uint32_t cur = 0;
  for (uint32_t i = 1; i < ev.size(); ++i) {
    if (ev[i].end_ns > ev[cur].end_ns) cur = i;
  }
  std::vector<bool> seen(ev.size(), false);
  while (cur != kNone && !seen[cur]) {
    seen[cur] = true;
    path.events.push_back(cur);
    path.busy_ns = saturating_add(path.busy_ns, ev[cur].duration_ns());
    uint32_t best = kNone;
    predecessors(cur, [&](uint32_t p) {
      // A predecessor must not end after the event it precedes ends (guards
      // against cycles in malformed edge lists).
      if (p >= ev.size() || seen[p] || ev[p].end_ns > ev[cur].end_ns) return;
      if (best == kNone || ev[p].end_ns > ev[best].end_ns) best = p;
    });
    cur = best;
  }
  std::reverse(path.events.begin(), path.events.end());
  path.start_ns = ev[path.events.front()].start_ns;
  path.end_ns = ev[path.events.back()].end_ns;
  return path;
}

struct KernelStats {
  std::string name;
  EventKind kind = EventKind::kOther;  // the kind of its first event
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double mean_ns = 0.0;
  double stddev_ns = 0.0;  // population standard deviation
};
// Per event name, sorted by total time (largest first), then name.
std::vector<KernelStats> kernel_statistics(const Trace& trace);
std::vector<KernelStats> kernel_statistics(const CompactTrace& trace);  // the same over a compact trace

}  // namespace sl::trace
