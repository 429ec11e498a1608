// HLO text parser: nested instructions. XLA's parser lets an operand be a
// whole instruction written inline, `add(f32[10] parameter(0), multiply(%a,
// %b))`, with an optional result shape and no attributes. Each one becomes an
// instruction named `<opcode>.nested.N`, placed before its user.

#include <fmt/format.h>

#include "core/hlo/parser_impl.h"

namespace sl::hlo::parser_internal {

bool Parser::parse_nested_operand(Instruction& user, bool has_shape,
                                  const std::unordered_map<std::string_view, int>& names,
                                  std::vector<PendingOperand>& pending) {
  if (nested_depth_ >= kMaxNesting) {
    return fail_here(fmt::format("nested instructions go deeper than {} levels", kMaxNesting));
  }
  Instruction nested;
  nested.loc = cur_.loc;
  if (has_shape) nested.shape = operand_shape_;
  if (!parse_opcode_token(nested)) return false;
  if (!has_shape && (nested.opcode == Opcode::kParameter || nested.opcode == Opcode::kConstant)) {
    return fail(nested.opcode_loc, fmt::format("a nested {} needs its result shape", opcode_name(nested.opcode)));
  }
  const size_t pending_before = pending.size();
  const size_t refs_before = element_refs_.size();
  ++nested_depth_;
  const bool ok = parse_operands(nested, kNestedIndex, names, pending);
  --nested_depth_;
  if (!ok) return false;
  if (pending.size() != pending_before || element_refs_.size() != refs_before) {
    const SourceLoc loc = pending.size() != pending_before ? pending.back().loc : element_refs_.back().loc;
    return fail(loc, "an operand of a nested instruction must name an instruction defined before it");
  }
  if (!has_shape) {
    std::string problem = infer_result_shape(*computation_, nested);
    if (!problem.empty()) return fail(nested.opcode_loc, problem);
  }
  nested.name = fmt::format("{}.nested.{}", opcode_name(nested.opcode), ++nested_count_);
  nested_.push_back(std::move(nested));
  user.operands.push_back(nested_operand(nested_.size() - 1));
  return true;
}

void Parser::materialize_nested(Computation& computation, std::vector<PendingOperand>& pending, int& index) {
  // The user was built in place at `index` (the last slot): take it out, append
  // the nested instructions in the order they were read, and put it back.
  Instruction user = std::move(computation.instructions.back());
  computation.instructions.pop_back();
  const int base = index;
  auto remap = [base](std::vector<int>& operands) {
    for (int& operand : operands) {
      if (is_nested_operand(operand)) operand = base + static_cast<int>(nested_slot(operand));
    }
  };
  for (Instruction& nested : nested_) {
    remap(nested.operands);
    computation.instructions.push_back(std::move(nested));
  }
  nested_.clear();
  remap(user.operands);
  index = static_cast<int>(computation.instructions.size());
  for (PendingOperand& p : pending) {
    if (p.instruction == base) p.instruction = index;
  }
  computation.instructions.push_back(std::move(user));
}

}  // namespace sl::hlo::parser_internal
