#pragma once
// Row-major index arithmetic shared by the CPU ops.

#include <cstdint>
#include <vector>

#include "core/exec/literal.h"

namespace sl::exec::cpu {

// strides[i] = product of dims[i+1..].
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims);

// Advances a multi-index over `dims` in row-major order; false after the last.
bool next_index(std::vector<int64_t>& index, const std::vector<int64_t>& dims);

Literal zeros_literal(const hlo::Shape& shape);

// A bitcast is a reinterpretation of the buffer: with layouts other than
// row-major ({0,1} after XLA's layout assignment) it moves elements, e.g.
// f32[64,16]{0,1} -> f32[16,64]{1,0} is a transpose. Layouts are
// minor_to_major lists; empty means row-major. Element counts must match.
Literal bitcast_between_layouts(const Literal& operand, const std::vector<int64_t>& operand_minor_to_major,
                                const hlo::Shape& result, const std::vector<int64_t>& result_minor_to_major);

// Largest array the CPU backend materialises (elements), to fail cleanly
// instead of exhausting memory.
constexpr int64_t kMaxElements = int64_t{1} << 26;
// Largest dot (2*m*n*k) the reference evaluator attempts; bigger GEMMs would
// take hours on the host and belong on the sim or cuda backend.
constexpr double kMaxDotFlops = 4e10;

}  // namespace sl::exec::cpu
