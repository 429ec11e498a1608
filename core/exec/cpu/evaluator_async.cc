// async-start / async-update / async-done. The wrapped work runs at the
// start (where lowering issues it); the done only unpacks the result.
// Shapes follow XLA: explicit async-start and most sugared starts are
// ((operands), output, context...); all-gather-start is (operand(s),
// output(s)); collective-permute-start is (operand, output, u32[], u32[]);
// all-reduce-start is just the output.

#include <fmt/format.h>

#include <cmath>

#include "core/exec/cpu/evaluator.h"
#include "core/exec/event_kind.h"
#include "core/sched/streams.h"

namespace sl::exec::cpu {
namespace {

using hlo::Opcode;

Status op_error(const hlo::Instruction& inst, const std::string& what) {
  return invalid_input(fmt::format("'{}' ({}): {}", inst.name, hlo::opcode_name(inst.opcode), what));
}

bool has_collective(const hlo::Module& module, int computation, int depth = 0) {
  if (computation < 0 || static_cast<size_t>(computation) >= module.computations.size() || depth > 16) return false;
  for (const hlo::Instruction& inst : module.computations[static_cast<size_t>(computation)].instructions) {
    if (hlo::is_collective(inst.async_wrapped.value_or(inst.opcode))) return true;
    for (int c : inst.called) {
      if (has_collective(module, c, depth + 1)) return true;
    }
  }
  return false;
}

// The start value: `output` placed in XLA's start shape.
Result<Value> start_value(const hlo::Instruction& inst, Opcode wrapped, const std::vector<const Value*>& operands,
                          Value output) {
  const hlo::Shape& shape = inst.shape;
  if (wrapped == Opcode::kAllReduce || !shape.is_tuple() || shape.elements.size() < 2) return output;
  std::vector<Value> elements;
  const hlo::Shape& first = shape.elements[0];
  if (operands.size() == 1 && !(first.is_tuple() && !operands[0]->is_tuple())) {
    elements.push_back(*operands[0]);
  } else {
    std::vector<Value> ops;
    for (const Value* v : operands) ops.push_back(*v);
    elements.push_back(Value::tuple(std::move(ops)));
  }
  elements.push_back(std::move(output));
  for (size_t i = 2; i < shape.elements.size(); ++i) elements.push_back(zeros_value(shape.elements[i]));
  return Value::tuple(std::move(elements));
}

// The shape of the wrapped op's result within a sugared start's shape.
hlo::Shape output_shape(const hlo::Instruction& start, Opcode wrapped) {
  if (wrapped == Opcode::kAllReduce || !start.shape.is_tuple() || start.shape.elements.size() < 2) return start.shape;
  return start.shape.elements[1];
}

}  // namespace

Result<Value> Evaluator::evaluate_async_start(const hlo::Instruction& inst, const std::vector<const Value*>& operands,
                                              const Scope& scope) {
  Scope inner = scope;
  if (inner.attributed.empty()) inner.attributed = inst.name;
  auto requested = inst.requested_stream();
  const int own_stream = requested ? static_cast<int>(*requested) : 1;

  if (!inst.async_wrapped) {
    if (inst.called.empty()) return op_error(inst, "async-start without calls=");
    if (scope.stream < 0) {
      inner.stream = has_collective(module_, inst.called[0]) ? sched::kCommStreamBase : own_stream;
    }
    std::vector<Value> args;
    for (const Value* v : operands) args.push_back(*v);
    SL_ASSIGN_OR_RETURN(Value output, evaluate(inst.called[0], args, inner));
    return start_value(inst, Opcode::kCall, operands, std::move(output));
  }

  const Opcode wrapped = *inst.async_wrapped;
  hlo::Instruction op = inst;
  op.opcode = wrapped;
  op.async_wrapped.reset();
  op.shape = output_shape(inst, wrapped);
  if (scope.stream < 0) inner.stream = hlo::is_collective(wrapped) ? sched::kCommStreamBase : own_stream;

  if (wrapped == Opcode::kCall || wrapped == Opcode::kWhile || wrapped == Opcode::kConditional) {
    SL_ASSIGN_OR_RETURN(Value output, evaluate_control(op, operands, inner));
    return start_value(inst, wrapped, operands, std::move(output));
  }
  auto start = std::chrono::steady_clock::now();
  SL_ASSIGN_OR_RETURN(Value output, evaluate_op(op, inst, operands, inner));
  auto end = std::chrono::steady_clock::now();
  if (record_ && scope.traced) {
    RawEvent e;
    e.stream = inner.stream;
    e.kind = event_kind_of(inst);
    e.name = inst.name;
    e.instruction = inner.attributed;
    e.start = start;
    e.end = end;
    std::vector<const Literal*> leaves;
    output.collect_leaves(&leaves);
    for (const Value* v : operands) v->collect_leaves(&leaves);
    for (const Literal* l : leaves) e.bytes += l->shape.byte_size();
    if (wrapped == Opcode::kCustomCall && operands.size() >= 2 && !operands[0]->is_tuple() && !leaves.empty()) {
      // 2*m*n*k: k from the lhs and the output (lhs = m*k, out = m*n per batch).
      const auto lhs = operands[0]->literal().shape.element_count();
      const auto rhs = operands[1]->literal().shape.element_count();
      const auto out = leaves[0]->shape.element_count();
      if (out > 0) e.flops = 2 * static_cast<int64_t>(std::llround(std::sqrt(double(lhs) * double(rhs) * double(out))));
    } else if (wrapped == Opcode::kAllReduce || wrapped == Opcode::kReduceScatter) {
      for (const Value* v : operands) {
        std::vector<const Literal*> in;
        v->collect_leaves(&in);
        for (const Literal* l : in) e.flops += l->shape.element_count();
      }
    }
    events_.push_back(std::move(e));
  }
  return start_value(inst, wrapped, operands, std::move(output));
}

Result<Value> Evaluator::evaluate_async_done(const hlo::Computation& comp, const hlo::Instruction& inst,
                                             const std::vector<const Value*>& operands) {
  if (operands.size() != 1) return op_error(inst, "needs one operand (the start or update)");
  // Find the start this done belongs to (through any async-update).
  const hlo::Instruction* start = &inst;
  for (int guard = 0; guard < 64 && !start->operands.empty(); ++guard) {
    const hlo::Instruction& prev = comp.instructions[static_cast<size_t>(start->operands[0])];
    start = &prev;
    if (prev.opcode == Opcode::kAsyncStart) break;
  }
  const bool all_reduce = inst.async_wrapped == Opcode::kAllReduce ||
                          (start->opcode == Opcode::kAsyncStart && start->async_wrapped == Opcode::kAllReduce);
  const Value& v = *operands[0];
  if (all_reduce || !v.is_tuple() || v.elements.size() < 2) return v;
  return v.elements[1];
}

}  // namespace sl::exec::cpu
