#pragma once
// Trip counts of while loops without known_trip_count (docs/program-format.md):
// the pattern XLA's while_loop_analysis recognises, a tuple element that the
// init sets to a constant, the body steps by a constant, and the condition
// compares with a constant. Scalar integer arithmetic through copies, converts
// and fusions is followed; anything else gives no count. Internal to core/sched.

#include <cstdint>
#include <optional>

#include "core/hlo/module.h"

namespace sl::sched {

// The loop's trip count, or nullopt when the pattern does not hold. The loop
// is stepped at most `limit` times: a longer one gives limit + 1.
std::optional<int64_t> infer_trip_count(const hlo::Module& module, const hlo::Computation& parent,
                                        const hlo::Instruction& while_loop, int64_t limit);

}  // namespace sl::sched
