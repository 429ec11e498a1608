// The evaluator's structured ops: those that take called computations
// (scatter, sort, reduce-window, select-and-scatter), return tuples (topk,
// variadic forms) or pass values through (opt-barrier, tokens).

#include <fmt/format.h>

#include "core/exec/cpu/evaluator.h"

namespace sl::exec::cpu {
namespace {

using hlo::Opcode;

Status op_error(const hlo::Instruction& inst, const std::string& what) {
  return invalid_input(fmt::format("'{}' ({}): {}", inst.name, hlo::opcode_name(inst.opcode), what));
}

std::vector<hlo::Shape> result_leaves(const hlo::Shape& shape) {
  std::vector<hlo::Shape> out;
  for (const hlo::Shape* s : shape.leaves()) out.push_back(*s);
  return out;
}

Result<Value> pack(const hlo::Instruction& inst, Result<std::vector<Literal>> result) {
  if (!result) return op_error(inst, result.status().message());
  std::vector<Literal> leaves = std::move(result).value();
  size_t next = 0;
  return value_from_leaves(inst.shape, leaves, &next);
}

Result<Value> single(const hlo::Instruction& inst, Result<Literal> result) {
  if (!result) return op_error(inst, result.status().message());
  return Value::of(std::move(result).value());
}

}  // namespace

bool Evaluator::is_extended(Opcode op) {
  switch (op) {
    case Opcode::kGather: case Opcode::kScatter: case Opcode::kPad: case Opcode::kReverse: case Opcode::kSort:
    case Opcode::kTopK: case Opcode::kReduceWindow: case Opcode::kSelectAndScatter:
    case Opcode::kOptimizationBarrier: case Opcode::kAfterAll: case Opcode::kAddDependency: case Opcode::kDomain:
    case Opcode::kRngBitGenerator: case Opcode::kScan: case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining: case Opcode::kBatchNormGrad: case Opcode::kConvolution:
    case Opcode::kCholesky: case Opcode::kTriangularSolve:
      return true;
    default:
      return false;
  }
}

Result<Comparator> Evaluator::make_comparator(const hlo::Instruction& inst) {
  if (inst.called.empty()) return op_error(inst, "needs to_apply=");
  const int index = inst.called[0];
  if (index < 0 || static_cast<size_t>(index) >= module_.computations.size()) {
    return op_error(inst, "comparator computation does not exist");
  }
  return Comparator([this, index](const std::vector<double>& lhs, const std::vector<double>& rhs) -> Result<bool> {
    std::vector<double> args;
    for (size_t k = 0; k < lhs.size(); ++k) {
      args.push_back(lhs[k]);
      args.push_back(rhs[k]);
    }
    SL_ASSIGN_OR_RETURN(std::vector<double> r, call_on_scalars(index, args));
    if (r.size() != 1) return invalid_input("a sort comparator must return one pred");
    return r[0] != 0.0;
  });
}

Result<Value> Evaluator::evaluate_extended(const hlo::Instruction& inst, const std::vector<const Value*>& operands) {
  switch (inst.opcode) {
    case Opcode::kOptimizationBarrier:
      if (operands.size() != 1) return op_error(inst, "takes one operand");
      return *operands[0];
    case Opcode::kAddDependency:
      if (operands.empty()) return op_error(inst, "needs an operand");
      return *operands[0];
    case Opcode::kDomain:  // a sharding-domain marker: its operand passes through
      if (operands.size() != 1) return op_error(inst, "takes one operand");
      return *operands[0];
    case Opcode::kAfterAll:
      return Value::of(Literal{hlo::Shape::token(), {}});
    default:
      break;
  }
  Operands arrays;
  for (const Value* v : operands) v->collect_leaves(&arrays);
  auto need = [&](size_t count) -> Status {
    if (arrays.size() < count) return op_error(inst, fmt::format("needs {} operands, got {}", count, arrays.size()));
    return ok_status();
  };
  switch (inst.opcode) {
    case Opcode::kGather:
      SL_RETURN_IF_ERROR(need(2));
      return single(inst, eval_gather(inst, *arrays[0], *arrays[1]));
    case Opcode::kPad:
      SL_RETURN_IF_ERROR(need(2));
      return single(inst, eval_pad(inst, *arrays[0], *arrays[1]));
    case Opcode::kReverse:
      SL_RETURN_IF_ERROR(need(1));
      return single(inst, eval_reverse(inst, *arrays[0]));
    case Opcode::kRngBitGenerator:
      SL_RETURN_IF_ERROR(need(1));
      return pack(inst, eval_rng_bit_generator(inst, *arrays[0], result_leaves(inst.shape)));
    case Opcode::kScan:
      return evaluate_scan(inst, operands);
    case Opcode::kCholesky:
      SL_RETURN_IF_ERROR(need(1));
      return single(inst, eval_cholesky(inst, *arrays[0]));
    case Opcode::kTriangularSolve:
      SL_RETURN_IF_ERROR(need(2));
      return single(inst, eval_triangular_solve(inst, *arrays[0], *arrays[1]));
    case Opcode::kConvolution:
      SL_RETURN_IF_ERROR(need(2));
      return single(inst, eval_convolution(inst, *arrays[0], *arrays[1], inst.shape));
    case Opcode::kBatchNormInference: case Opcode::kBatchNormTraining: case Opcode::kBatchNormGrad:
      return pack(inst, eval_batch_norm(inst, arrays, result_leaves(inst.shape)));
    case Opcode::kTopK:
      SL_RETURN_IF_ERROR(need(1));
      return pack(inst, eval_topk(inst, *arrays[0], result_leaves(inst.shape)));
    case Opcode::kSort: {
      SL_ASSIGN_OR_RETURN(Comparator less, make_comparator(inst));
      return pack(inst, eval_sort(inst, arrays, less));
    }
    case Opcode::kScatter: {
      SL_RETURN_IF_ERROR(need(3));
      std::vector<hlo::PrimitiveType> types;
      for (size_t i = 0; i < arrays.size() / 2; ++i) types.push_back(arrays[i]->shape.type);
      SL_ASSIGN_OR_RETURN(Combiner combine, make_combiner(inst, types));
      return pack(inst, eval_scatter(inst, arrays, combine));
    }
    case Opcode::kReduceWindow: {
      std::vector<hlo::PrimitiveType> types;
      for (size_t i = 0; i < arrays.size() / 2; ++i) types.push_back(arrays[i]->shape.type);
      SL_ASSIGN_OR_RETURN(Combiner combine, make_combiner(inst, types));
      return pack(inst, eval_reduce_window(inst, arrays, result_leaves(inst.shape), combine));
    }
    case Opcode::kSelectAndScatter: {
      SL_RETURN_IF_ERROR(need(3));
      if (inst.called.size() < 2) return op_error(inst, "needs select= and scatter=");
      SL_ASSIGN_OR_RETURN(Combiner select, make_combiner(inst, {arrays[0]->shape.type}, 0));
      SL_ASSIGN_OR_RETURN(Combiner scatter, make_combiner(inst, {arrays[1]->shape.type}, 1));
      return single(inst, eval_select_and_scatter(inst, arrays, select, scatter));
    }
    default:
      return op_error(inst, "is not supported by the cpu backend");
  }
}

}  // namespace sl::exec::cpu
