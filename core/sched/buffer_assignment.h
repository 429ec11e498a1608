#pragma once
// Buffer assignment (DESIGN section 3): every array value that needs memory
// gets a slice of one per-device arena. Live ranges run over the flattened
// schedule; a value defined inside an async region lives until its done, so
// concurrent work never shares memory, while strictly sequential work may.

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/sched/thunk.h"

namespace sl::sched {

struct BufferAssignment {
  int64_t arena_bytes = 0;  // size of the arena every device allocates
  int64_t peak_bytes = 0;   // largest sum of simultaneously live bytes
};

}  // namespace sl::sched
