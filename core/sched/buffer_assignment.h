#pragma once
// Buffer assignment (docs/streams.md): every array value that needs memory
// gets a slice of one per-device arena. Live ranges run over the flattened
// schedule; a value defined inside an async region lives until its done, so
// concurrent work never shares memory, while strictly sequential work may.
//
// Positions are thunk indices of the (device-independent) flattened schedule.
// A value touched by work inside an async region is live over the whole
// region, from the start's record to the done's wait: the other stream may
// run that work at any moment in between. Entry parameters, constants and the
// ROOT's outputs are live over the whole program.

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/sched/thunk.h"

namespace sl::sched {

constexpr int64_t kBufferAlignment = 256;

// One array leaf of one occurrence of one instruction.
struct LogicalBuffer {
  BufferSlice slice;                              // offset -1 when size is 0 (tokens, empty arrays)
  int64_t start = 0;                              // first position live (inclusive)
  int64_t end = 0;                                // last position live (inclusive)
  const hlo::Instruction* instruction = nullptr;  // defining instruction
  int32_t leaf = 0;                               // leaf index in its shape
};

struct ConstantBuffer {
  const hlo::Instruction* instruction = nullptr;  // a constant; one buffer for all its occurrences
  BufferSlice slice;
};

struct BufferAssignment {
  int64_t arena_bytes = 0;  // size of the arena every device allocates
  int64_t peak_bytes = 0;   // largest sum of simultaneously live bytes (unaligned sizes)

  std::vector<LogicalBuffer> buffers;               // every value, by buffer id
  std::vector<std::vector<BufferSlice>> parameters;  // parameters[p] = leaves of entry parameter(p)
  std::vector<BufferSlice> outputs;                  // the entry ROOT's leaves, in order
  std::vector<ConstantBuffer> constants;             // to be filled before the run
};

// A value to place: `size` bytes live over [start, end].
struct LiveInterval {
  int64_t size = 0;
  int64_t start = 0;
  int64_t end = 0;
};

struct IntervalAllocation {
  std::vector<int64_t> offsets;  // per interval; -1 for size 0
  int64_t arena_bytes = 0;
  int64_t peak_bytes = 0;
};

// Best-fit offset allocation, `alignment`-aligned, in order of start (larger
// first on ties); a value whose range ended before another starts frees its
// memory for it. Two
// intervals that overlap in time never overlap in memory. O(n log n).
IntervalAllocation allocate_intervals(const std::vector<LiveInterval>& intervals,
                                      int64_t alignment = kBufferAlignment);

}  // namespace sl::sched
