#pragma once
// Views of a trace for comparing runs across backends (docs/store.md):
// a measured cuda run records several iterations and may launch several
// kernels per instruction (a cuBLAS GEMM, a NCCL group), while a simulated
// run has one iteration and one event per thunk.

#include <cstdint>
#include <vector>

#include "core/trace/trace.h"

namespace sl::trace {

// Distinct iteration numbers (>= 0) in ascending order.
std::vector<int32_t> iterations_of(const Trace& trace);

// The events (and the dependencies between them) of one iteration, each
// device's times shifted so that its part of the iteration starts at 0: the
// devices' host threads queue work at slightly different times, and that
// skew is not the program's time (a device that waits for a late peer still
// shows it, as a longer collective). Strings and counters are kept.
Trace one_iteration(const Trace& trace, int32_t iteration);

// An iteration's length: its longest device's last end - first start.
struct IterationLength {
  int32_t iteration = 0;
  int64_t length_ns = 0;
};

// Every iteration's length, shortest first (ties by iteration number).
std::vector<IterationLength> iteration_lengths(const Trace& trace);

// The iteration whose length is the median, as measured runs are
// summarised (the lower median of an even count); -1 for an empty trace.
int32_t median_iteration(const Trace& trace);

// The trace itself when it has one iteration, else its median iteration.
Trace representative_iteration(const Trace& trace);

// One event per instruction launch: events of the same device, instruction,
// iteration and nonzero correlation id (the cuda backend stores the thunk
// index there, as the simulator does) become one event from the first start
// to the last end, on the first event's stream, with the kind and name of the
// longest (a cuBLAS GEMM's kernel, not the memset before it). Other events
// pass through.
Trace instruction_spans(const Trace& trace);

}  // namespace sl::trace
