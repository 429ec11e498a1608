#pragma once
// The arithmetic of the collectives, once every member's operands have met in
// the rendezvous. `inputs[j]` holds the operand leaves of the j-th member of
// the group (group order); results are this device's result leaves.

#include <vector>

#include "core/common/status.h"
#include "core/exec/cpu/ops.h"
#include "core/exec/cpu/rendezvous.h"

namespace sl::exec::cpu {

// Concatenates each operand along `dimension` in group order.
Result<std::vector<Literal>> all_gather_result(const hlo::Instruction& instruction,
                                               const std::vector<Contribution>& inputs,
                                               const std::vector<hlo::Shape>& result_shapes);

// Reduces each operand across the group with `combine[leaf]` (folding in
// group order).
Result<std::vector<Literal>> all_reduce_result(const hlo::Instruction& instruction,
                                               const std::vector<Contribution>& inputs,
                                               const std::vector<hlo::Shape>& result_shapes,
                                               const std::vector<Combiner>& combine);

// Reduces like all-reduce, then hands member `rank` its rank-th equal slice
// along `dimension`.
Result<std::vector<Literal>> reduce_scatter_result(const hlo::Instruction& instruction,
                                                   const std::vector<Contribution>& inputs, int64_t rank,
                                                   const std::vector<hlo::Shape>& result_shapes,
                                                   const std::vector<Combiner>& combine);

}  // namespace sl::exec::cpu
