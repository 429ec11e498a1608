#pragma once
// Result shapes as XLA's ShapeInference computes them, for the ops whose
// result the verifier (and lowering) must derive from the operands. Errors are
// kInvalidInput with a message that names the operand and dimension at fault
// and leaves the opcode to the caller ("operand 1 dimension 1 (size 6) is not
// divisible by the group size 4").

#include <cstdint>
#include <vector>

#include "core/common/status.h"
#include "core/hlo/module.h"

namespace sl::hlo {

// One operand: that operand's result; several: a tuple with one result each.
// all-gather: out[d] = in[d] * group_size.
Result<Shape> infer_all_gather_shape(const std::vector<const Shape*>& operands, int64_t dimension,
                                     int64_t group_size);
// reduce-scatter: in[d] % group_size == 0, out[d] = in[d] / group_size.
Result<Shape> infer_reduce_scatter_shape(const std::vector<const Shape*>& operands, int64_t dimension,
                                         int64_t group_size);
// all-reduce and collective-permute: out = in.
Result<Shape> infer_all_reduce_shape(const std::vector<const Shape*>& operands);

// dot: batch dims, then lhs free dims, then rhs free dims, in that order.
// The element type of the result is `result_type` (XLA's preferred type).
Result<Shape> infer_dot_shape(const Shape& lhs, const Shape& rhs, const DotDims& dims,
                              PrimitiveType result_type);

// gather (XLA's InferGatherShape): batch dimensions of the start indices
// (all but index_vector_dim) interleaved with the slice's offset dimensions,
// which sit at `offset_dims`.
Result<Shape> infer_gather_shape(const Shape& operand, const Shape& start_indices, const GatherDims& dims);

// pad: low + high + size + (size - 1) * interior per dimension (low/high may be negative).
Result<Shape> infer_pad_shape(const Shape& operand, const std::vector<PadDim>& padding);

// reduce-window / the spatial part of a window: per dimension the dilated,
// padded base, strided by the dilated window.
Result<std::vector<int64_t>> infer_window_dims(const std::vector<int64_t>& base, const std::vector<WindowDim>& window);

// The number of devices in each group of a collective (all-gather shard count,
// reduce-scatter split count): XLA's GetSubgroupSize for the group mode.
// Assumes the replica groups were checked; empty groups mean "all ids".
Result<int64_t> collective_group_size(const Instruction& collective, int64_t replica_count,
                                      int64_t num_partitions);

}  // namespace sl::hlo
