#pragma once
// The host core's pace a capture measured (cupti_tracer/host_pace.h), kept
// as two of the run's counters. The capture reader writes them; `show` and
// `compare` read them to say whether two runs' hosts ran alike.

#include <cstdint>
#include <string_view>

#include "core/trace/trace.h"

namespace sl::trace {

inline constexpr std::string_view kHostProbeStartCounter = "host_probe_start_ns";
inline constexpr std::string_view kHostProbeEndCounter = "host_probe_end_ns";
inline constexpr std::string_view kHostProbeDescription =
    "ns a fixed CPU workload took in the captured process at the capture's start (the best of 3): the host "
    "core's pace; twice the time is half the speed";

struct HostProbe {
  int64_t start_ns = 0;  // 0: not measured (a simulated run, an older capture)
  int64_t end_ns = 0;
  bool measured() const { return start_ns > 0 || end_ns > 0; }
};

inline HostProbe host_probe_of(const Trace& trace) {
  HostProbe out;
  for (const Counter& c : trace.counters) {
    if (c.name == kHostProbeStartCounter) out.start_ns = c.value;
    if (c.name == kHostProbeEndCounter) out.end_ns = c.value;
  }
  return out;
}

}  // namespace sl::trace
