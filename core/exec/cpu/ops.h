#pragma once
// Array operations of the CPU reference backend, with XLA semantics for every
// element type. Each takes its operands' literals and returns the result
// rounded to the result type (bf16/f16 are computed in f32 and rounded after
// every op, as XLA's CPU backend does).

#include <functional>
#include <vector>

#include "core/common/status.h"
#include "core/exec/literal.h"
#include "core/hlo/module.h"

namespace sl::exec::cpu {

using Operands = std::vector<const Literal*>;

// add subtract multiply divide maximum minimum negate abs exponential compare
// select and or remainder convert.
Result<Literal> eval_elementwise(const hlo::Instruction& instruction, const Operands& operands);

// One binary op on two scalars of `type`, rounded to `type` (reduce and
// all-reduce fast paths). Error for ops that are not binary arithmetic.
using BinaryFn = double (*)(double, double);
Result<BinaryFn> binary_fn(hlo::Opcode op, hlo::PrimitiveType type);

// Saturating float -> integer, wrapping integer -> integer, rounding to
// floats; pred is != 0.
double convert_value(double v, hlo::PrimitiveType from, hlo::PrimitiveType to);

// constant iota copy broadcast reshape bitcast transpose slice dynamic-slice
// dynamic-update-slice concatenate.
Result<Literal> eval_data_op(const hlo::Instruction& instruction, const Operands& operands);

// dot with batch and contracting dimensions; accumulates in double.
Result<Literal> eval_dot(const hlo::DotDims& dims, const Literal& lhs, const Literal& rhs,
                         const hlo::Shape& result_shape);

// custom-calls __cublas$gemm and __cublas$lt$matmul:
// epilogue(alpha * dot(a, b) [+ beta * c] [+ bias]). Returns the output and,
// for the *_AUX epilogues, the pre-activation auxiliary output.
Result<std::vector<Literal>> eval_gemm(const hlo::Instruction& custom_call, const Operands& operands,
                                       const std::vector<hlo::Shape>& output_shapes);

// A reduction function over N scalars per side: acc = f(acc, x), each rounded
// to its element type. N = 1 for plain reduce and all-reduce.
using Combiner = std::function<Status(std::vector<double>& acc, const std::vector<double>& x)>;

// reduce (variadic: N inputs, N init values, tuple of N results).
Result<std::vector<Literal>> eval_reduce(const hlo::Instruction& instruction, const Operands& operands,
                                         const std::vector<hlo::Shape>& result_shapes, const Combiner& combine);

// gather with XLA's dimension numbers; start indices clamp into the operand.
Result<Literal> eval_gather(const hlo::Instruction& instruction, const Literal& operand, const Literal& indices);

// scatter (variadic: N operands, the indices, N updates), updates applied in
// row-major update order through `combine(current, update)`; an update
// window that does not fit in the operand is skipped.
Result<std::vector<Literal>> eval_scatter(const hlo::Instruction& instruction, const Operands& operands,
                                          const Combiner& combine);

// pad with low/high (negative cuts) and interior padding.
Result<Literal> eval_pad(const hlo::Instruction& instruction, const Literal& operand, const Literal& value);
Result<Literal> eval_reverse(const hlo::Instruction& instruction, const Literal& operand);

// reduce-window (variadic) with window strides, padding and dilations.
Result<std::vector<Literal>> eval_reduce_window(const hlo::Instruction& instruction, const Operands& operands,
                                                const std::vector<hlo::Shape>& result_shapes,
                                                const Combiner& combine);

// select-and-scatter: `select(a, b)` leaves a != 0 in a[0] when a is kept
// over b; `scatter(acc, x)` combines into the output.
Result<Literal> eval_select_and_scatter(const hlo::Instruction& instruction, const Operands& operands,
                                        const Combiner& select, const Combiner& scatter);

// The comparator of sort: lhs and rhs hold one element of each operand.
using Comparator = std::function<Result<bool>(const std::vector<double>& lhs, const std::vector<double>& rhs)>;

// sort along dimensions={d} of every operand by `less` (stable).
Result<std::vector<Literal>> eval_sort(const hlo::Instruction& instruction, const Operands& operands,
                                       const Comparator& less);

// topk along the last dimension: (values, s32 indices), ties by lower index.
Result<std::vector<Literal>> eval_topk(const hlo::Instruction& instruction, const Literal& operand,
                                       const std::vector<hlo::Shape>& result_shapes);

// convolution with window=, dim_labels=, feature_group_count= and
// batch_group_count= (a direct loop; sums in double).
Result<Literal> eval_convolution(const hlo::Instruction& instruction, const Literal& lhs, const Literal& rhs,
                                 const hlo::Shape& result_shape);

// cholesky (lower=) and triangular-solve (left_side=, lower=, unit_diagonal=,
// transpose_a=) over the two minor dimensions.
Result<Literal> eval_cholesky(const hlo::Instruction& instruction, const Literal& a);
Result<Literal> eval_triangular_solve(const hlo::Instruction& instruction, const Literal& a, const Literal& b);

// batch-norm-inference (one result), batch-norm-training and batch-norm-grad
// (three), with epsilon= and feature_index= from the instruction.
Result<std::vector<Literal>> eval_batch_norm(const hlo::Instruction& instruction, const Operands& operands,
                                             const std::vector<hlo::Shape>& result_shapes);

// rng-bit-generator (state u64[n] -> (state, bits)): algorithm=rng_three_fry
// or rng_philox (rng_default: Philox, as on GPU), bit for bit as XLA's
// RngBitGeneratorExpander computes them.
Result<std::vector<Literal>> eval_rng_bit_generator(const hlo::Instruction& instruction, const Literal& state,
                                                    const std::vector<hlo::Shape>& result_shapes);

}  // namespace sl::exec::cpu
