#pragma once
// The host core's pace, as the captured process saw it. On a virtual
// machine the same CPU can run a loop at half its speed for seconds at a
// time (a shared physical core or its clock; bench/FIDELITY-real.md, "The
// host's pace, pinned"), and a launch-bound step slows with it. The
// injection library times a fixed CPU workload at the capture's start and
// end, so that two captures can say whether their cores ran alike (a step
// can also wait on the host for other reasons, which this does not see).

#include <cstdint>

namespace sl::cupti {

// Nanoseconds a fixed integer workload took (2.1-2.9 ms on the H100 machine), the
// best of `tries`: a try that was preempted is the slow one, not the pace.
int64_t host_probe_ns(int tries = 3);

}  // namespace sl::cupti
