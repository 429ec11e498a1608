#pragma once
// Internal to the verifier (verifier.cc, verify_*.cc): the instruction under
// check with its resolved operands, and the helpers the rule families share.
// Rule functions never index anything without a guard: the driver only hands
// them instructions whose operand indices are valid.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/hlo/diagnostic.h"
#include "core/hlo/module.h"

namespace sl::hlo::verify_detail {

struct Site {
  const Module& module;
  const Computation& computation;
  const Instruction& inst;
  std::vector<const Instruction*> operands;  // resolved, never null
  std::vector<Diagnostic>& out;

  void error(std::string message) const;
  size_t operand_count() const { return operands.size(); }
  const Shape& operand_shape(size_t i) const { return operands[i]->shape; }
  std::vector<const Shape*> operand_shapes() const;
};

std::string str(const Shape& shape);
// "%name"
std::string ref(const Instruction& inst);
// The name the instruction is written with: "all-gather-start", "add"...
std::string written_opcode(const Instruction& inst);

// Exactly `n` operands; reports and returns false otherwise.
bool expect_operand_count(const Site& site, size_t n);
bool expect_min_operand_count(const Site& site, size_t n);
// The instruction's shape equals `expected`; reports and returns false otherwise.
bool expect_shape(const Site& site, const Shape& expected);
// An array operand; reports tuple/token operands.
bool expect_array_operand(const Site& site, size_t i);

// Called computation k (to_apply=/calls=/condition=/body=), or null after an error.
const Computation* called_computation(const Site& site, size_t k, std::string_view attribute);
// Parameter shapes of a computation by parameter number (null where a number is missing).
std::vector<const Shape*> parameter_shapes(const Computation& computation);
// The root's shape, or null when the computation has no valid root.
const Shape* root_shape(const Computation& computation);
// The callee takes exactly the operand shapes `args` (operands `first`.. of the site).
void expect_arguments(const Site& site, const Computation& callee, const std::vector<const Shape*>& args,
                      std::string_view role);
// A reduction computation: two `type[]` parameters and a `type[]` root.
void expect_reducer(const Site& site, const Computation& callee, PrimitiveType type, std::string_view what);

// Rule families (one file each).
void verify_data(const Site& site);           // verify_data.cc
void verify_elementwise(const Site& site);    // verify_elementwise.cc
void verify_compute(const Site& site);        // verify_compute.cc: reduce, dot, fusion, custom-call
void verify_control(const Site& site);        // verify_control.cc: call, while, conditional
void verify_async(const Site& site);          // verify_async.cc
void verify_indexing(const Site& site);       // verify_indexing.cc: gather, scatter, pad, windows, sort, topk
void verify_side_effects(const Site& site);   // verify_side_effects.cc: send/recv, tokens, barriers, rng
// Control predecessors name instructions of the computation and, with the
// operand edges, form no cycle (verify_ordering.cc).
void verify_ordering(const Module& module, const Computation& computation, std::vector<Diagnostic>& out);
// Every async start has exactly one done in its computation.
void verify_async_pairs(const Module& module, const Computation& computation, std::vector<Diagnostic>& out);
// A collective `op` whose operands are the site's operands. `result` is the
// collective's result shape as declared (for a sugared start, the result part
// of the start's shape); null skips the shape comparison.
void verify_collective(const Site& site, Opcode op, const Shape* result);  // verify_collectives.cc
// collective-permute(input, output, input offsets, output offsets): XLA's in-place form.
bool is_in_place_permute(const Site& site);

}  // namespace sl::hlo::verify_detail
