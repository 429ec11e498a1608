#pragma once
// Reduces a warp can compute for the row it works on (docs/codegen.md, "Rows
// in a warp"): softmax-like fusions read a reduce of each row of a
// [rows, R] array back at every element of that row (x - max, exp / sum).
// XLA's Triton emitter keeps the row on chip; hoisting such a reduce into a
// kernel of its own reads the row from memory once more and launches once
// more. When every use of a reduce within an output's loop reads it at the
// row the loop is on, the warp working on that row computes it first and
// the loop reads the value from a register. Proven by following the index
// from the output down to the reduce: elementwise ops, converts, reshapes,
// copies and row-major bitcasts keep it, a broadcast along the R trailing
// elements takes it from the element to its row, and anything else
// (transpose, slice, gather, ...) loses track of it.

#include <cstdint>
#include <set>
#include <vector>

#include "core/hlo/module.h"

namespace sl::exec::codegen {

// Rows longer than this stay out of warps (a lane would loop too long).
inline constexpr int64_t kMaxWarpRow = 16384;

// One output's loop run a warp per row.
struct RowLoop {
  int output = -1;          // instruction of the computation
  int64_t row = 0;          // R: elements of a row; 0: not run a warp per row
  std::vector<int> reduces; // computed by the warp per row, in dependency order
};

struct RowLocalPlan {
  // Per output of the request, in order: element loops (`element_loop`)
  // with their row length and reduces; row-reduce outputs keep row 0 here.
  std::vector<RowLoop> loops;
  // Every reduce some loop computes per row (never one any output also
  // reads at another index).
  std::set<int> in_warp;
};

// For `outputs` of `c` (the kernel's stores), with `loaded` read from
// buffers. `driven_rows[n]`: when output n is a row reduce's loop (one
// output element per row), the row length of that reduce; 0 for an element
// loop, -1 for any other loop (a column reduce), which binds nothing.
// `row_major[n]`: output n is stored row-major (a warp per row of an output
// laid out otherwise would store out of order).
RowLocalPlan plan_row_local(const hlo::Computation& c, const std::vector<int>& outputs,
                            const std::vector<int64_t>& driven_rows, const std::vector<bool>& row_major,
                            const std::vector<int>& loaded);

}  // namespace sl::exec::codegen
