#pragma once
// In-place dynamic-update-slice and scatter (alone, as a fusion's root, or as
// an element of a fusion's root tuple), as XLA's buffer assignment does it:
// when the update is the last reader of its operand's buffer, its result
// takes that buffer, so the update is written where the operand already lies
// instead of copying the whole operand first. The cuda backend then launches
// only the update's copy (same offset for operand and result), and the
// thunk's bytes_accessed counts only what it moves (read and write the
// update).

#include "core/sched/emitter.h"

namespace sl::sched::detail {

// Rewrites `flat` before buffers get offsets: merges each eligible update's
// result into its operand's logical buffer (renaming every reference) and
// leaves the merged-away buffer empty. Not eligible: an operand read later
// (or by another operand of the same update, or inside the fusion by
// anything but the update), an entry parameter, constant or
// output, or sizes that differ. O(thunks + buffer ids).
void alias_in_place_updates(const hlo::Module& module, FlatProgram& flat);

}  // namespace sl::sched::detail
