#include "cupti_tracer/host_pace.h"

#include <algorithm>
#include <chrono>
#include <limits>

namespace sl::cupti {

namespace {

// A chain of dependent integer steps (xorshift): no memory traffic and no
// parallelism for the core to find, so its time is the core's own speed.
constexpr int kProbeSteps = 1 << 20;

uint64_t fixed_workload(uint64_t seed) {
  uint64_t x = seed | 1;
  for (int i = 0; i < kProbeSteps; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

}  // namespace

int64_t host_probe_ns(int tries) {
  volatile uint64_t sink = 0;  // keeps the workload from being optimized away
  int64_t best = std::numeric_limits<int64_t>::max();
  for (int t = 0; t < std::max(1, tries); ++t) {
    const auto start = std::chrono::steady_clock::now();
    // The seed is known only at run time, so nothing is computed ahead.
    sink = fixed_workload(sink + static_cast<uint64_t>(t) + 0x9e3779b97f4a7c15ULL);
    const auto ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    best = std::min<int64_t>(best, ns.count());
  }
  return std::max<int64_t>(1, best);
}

}  // namespace sl::cupti
