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

// all-to-all: with dimensions={d}, each operand splits into equal chunks
// along d and member i's chunk `rank` becomes chunk i of the result; without
// it (tuple form), result i is operand `rank` of member i.
Result<std::vector<Literal>> all_to_all_result(const hlo::Instruction& instruction,
                                               const std::vector<Contribution>& inputs, int64_t rank,
                                               const std::vector<hlo::Shape>& result_shapes);

}  // namespace sl::exec::cpu
