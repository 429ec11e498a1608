#include "core/exec/cpu/evaluator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/exec/cpu/array_util.h"
#include "core/exec/cpu/element_bits.h"
#include "core/exec/event_kind.h"
#include "core/sched/streams.h"

namespace sl::exec::cpu {
namespace {

using hlo::Opcode;

Status op_error(const hlo::Instruction& inst, const std::string& what) {
  return invalid_input(fmt::format("'{}' ({}): {}", inst.name, hlo::opcode_name(inst.opcode), what));
}

int64_t leaf_bytes(const Value& v) {
  std::vector<const Literal*> leaves;
  v.collect_leaves(&leaves);
  int64_t total = 0;
  for (const Literal* l : leaves) total += l->shape.byte_size();
  return total;
}

// Flops of the work an instruction does: 2*m*n*k (times batch) for GEMMs,
// one per result element for elementwise ops, one per input for reduce.
int64_t flops_of(const hlo::Instruction& inst, const std::vector<const Value*>& operands, const Value& result) {
  const Opcode op = inst.async_wrapped.value_or(inst.opcode);
  std::vector<const Literal*> out;
  result.collect_leaves(&out);
  if (out.empty()) return 0;
  const int64_t out_elems = out[0]->shape.element_count();
  if ((op == Opcode::kDot || op == Opcode::kCustomCall) && operands.size() >= 2 && !operands[0]->is_tuple() &&
      !operands[1]->is_tuple()) {
    const hlo::Shape& lhs = operands[0]->literal().shape;
    const hlo::Shape& rhs = operands[1]->literal().shape;
    int64_t k = 1;
    if (!inst.dot.lhs_contracting.empty()) {
      for (int64_t d : inst.dot.lhs_contracting) {
        if (d >= 0 && d < lhs.rank()) k *= lhs.dims[static_cast<size_t>(d)];
      }
    } else if (out_elems > 0) {
      // gemm whose dimensions are only in backend_config: lhs*rhs = out*k^2 (no batch).
      double k2 = static_cast<double>(lhs.element_count()) * static_cast<double>(rhs.element_count()) /
                  static_cast<double>(out_elems);
      k = static_cast<int64_t>(std::llround(std::sqrt(k2)));
    }
    return 2 * out_elems * k;
  }
  if (hlo::is_elementwise(op)) return out_elems;
  if (op == Opcode::kReduce || op == Opcode::kAllReduce || op == Opcode::kReduceScatter) {
    int64_t in = 0;
    for (const Value* v : operands) {
      std::vector<const Literal*> leaves;
      v->collect_leaves(&leaves);
      for (const Literal* l : leaves) in += l->shape.element_count();
    }
    return in;
  }
  return 0;
}

}  // namespace

Result<Value> value_from_leaves(const hlo::Shape& shape, std::vector<Literal>& leaves, size_t* next) {
  if (!shape.is_tuple()) {
    if (*next >= leaves.size()) return invalid_input("too few result values for " + hlo::to_string(shape));
    return Value::of(std::move(leaves[(*next)++]));
  }
  std::vector<Value> elements;
  for (const hlo::Shape& e : shape.elements) {
    SL_ASSIGN_OR_RETURN(Value v, value_from_leaves(e, leaves, next));
    elements.push_back(std::move(v));
  }
  return Value::tuple(std::move(elements));
}

Evaluator::Evaluator(const hlo::Module& module, DeviceContext context, Rendezvous* rendezvous,
                     EvaluatorOptions options)
    : module_(module), context_(context), rendezvous_(rendezvous), options_(options) {}

Result<Value> Evaluator::run_entry(const std::vector<Value>& parameters, bool record) {
  record_ = record;
  return evaluate(module_.entry, parameters, Scope{});
}

Status Evaluator::located(const hlo::Instruction& inst, const Status& status) const {
  if (status.is_ok() || status.message().find(": error: ") != std::string::npos) return status;
  std::string where = module_.file_name.empty() ? std::string("<program>") : module_.file_name;
  if (inst.loc.line > 0) where += fmt::format(":{}:{}", inst.loc.line, inst.loc.col);
  return Status(status.code(), fmt::format("{}: error: device {}: {}", where, context_.device, status.message()));
}

int Evaluator::stream_for(const hlo::Instruction& inst, const Scope& scope) const {
  if (scope.stream >= 0) return scope.stream;
  return static_cast<int>(inst.requested_stream().value_or(sched::kMainStream));
}

bool Evaluator::does_work(const hlo::Instruction& inst) const {
  switch (inst.opcode) {
    case Opcode::kParameter: case Opcode::kTuple: case Opcode::kGetTupleElement: case Opcode::kConstant:
    case Opcode::kBitcast: case Opcode::kCall: case Opcode::kWhile: case Opcode::kConditional:
    case Opcode::kAsyncStart: case Opcode::kAsyncUpdate: case Opcode::kAsyncDone:
      return false;
    default:
      return true;
  }
}

Result<Value> Evaluator::evaluate(int computation, const std::vector<Value>& args, const Scope& scope) {
  if (computation < 0 || static_cast<size_t>(computation) >= module_.computations.size()) {
    return invalid_input(fmt::format("called computation #{} does not exist", computation));
  }
  const hlo::Computation& comp = module_.computations[static_cast<size_t>(computation)];
  if (comp.instructions.empty()) return invalid_input(fmt::format("computation '{}' is empty", comp.name));
  std::vector<Value> values(comp.instructions.size());
  std::vector<const Value*> operands;
  for (size_t i = 0; i < comp.instructions.size(); ++i) {
    const hlo::Instruction& inst = comp.instructions[i];
    operands.clear();
    for (int o : inst.operands) {
      if (o < 0 || static_cast<size_t>(o) >= i) {
        return located(inst, op_error(inst, "uses an operand that is not defined before it"));
      }
      operands.push_back(&values[static_cast<size_t>(o)]);
    }
    auto result = evaluate_instruction(comp, inst, operands, args, scope);
    if (!result) return located(inst, result.status());
    values[i] = std::move(result).value();
  }
  int root = comp.root >= 0 ? comp.root : static_cast<int>(comp.instructions.size()) - 1;
  return std::move(values[static_cast<size_t>(root)]);
}

namespace {

// A bitcast between arrays of different layouts reinterprets the buffer, so
// it moves elements (f32[64,16]{0,1} -> f32[16,64]{1,0} is a transpose);
// nullopt when both layouts are row-major (the plain reshape path applies).
std::optional<Result<Value>> bitcast_with_layouts(const hlo::Computation& comp, const hlo::Instruction& inst,
                                                  const std::vector<const Value*>& operands) {
  if (operands.size() != 1 || operands[0]->is_tuple() || inst.operands.size() != 1 || inst.operands[0] < 0 ||
      static_cast<size_t>(inst.operands[0]) >= comp.instructions.size() || !inst.shape.is_array()) {
    return std::nullopt;
  }
  const hlo::Shape& from = comp.instructions[static_cast<size_t>(inst.operands[0])].shape;
  if (!from.is_array() || (from.is_row_major() && inst.shape.is_row_major())) return std::nullopt;
  const Literal& operand = operands[0]->literal();
  if (operand.shape.element_count() != inst.shape.element_count()) return std::nullopt;  // reported by the op
  if (hlo::primitive_type_bits(operand.shape.type) != hlo::primitive_type_bits(inst.shape.type)) return std::nullopt;
  hlo::Shape moved_shape = inst.shape;
  moved_shape.type = operand.shape.type;
  Literal moved = bitcast_between_layouts(operand, from.minor_to_major, moved_shape, inst.shape.minor_to_major);
  if (moved_shape.type == inst.shape.type) return Result<Value>(Value::of(std::move(moved)));
  Result<Literal> converted = eval_bitcast_convert(inst.shape, moved);
  if (!converted) return Result<Value>(converted.status());
  return Result<Value>(Value::of(std::move(converted).value()));
}

}  // namespace

Result<Value> Evaluator::evaluate_instruction(const hlo::Computation& comp, const hlo::Instruction& inst,
                                              const std::vector<const Value*>& operands,
                                              const std::vector<Value>& args, const Scope& scope) {
  switch (inst.opcode) {
    case Opcode::kParameter:
      if (inst.parameter_number < 0 || static_cast<size_t>(inst.parameter_number) >= args.size()) {
        return op_error(inst, fmt::format("parameter({}) but the computation got {} argument(s)",
                                          inst.parameter_number, args.size()));
      }
      return args[static_cast<size_t>(inst.parameter_number)];
    case Opcode::kTuple: {
      std::vector<Value> elements;
      for (const Value* v : operands) elements.push_back(*v);
      return Value::tuple(std::move(elements));
    }
    case Opcode::kGetTupleElement: {
      if (operands.size() != 1 || !operands[0]->is_tuple()) return op_error(inst, "needs one tuple operand");
      const auto& elements = operands[0]->elements;
      if (inst.tuple_index < 0 || static_cast<size_t>(inst.tuple_index) >= elements.size()) {
        return op_error(inst, fmt::format("index {} out of range for a tuple of {}", inst.tuple_index, elements.size()));
      }
      return elements[static_cast<size_t>(inst.tuple_index)];
    }
    case Opcode::kCall:
    case Opcode::kWhile:
    case Opcode::kConditional:
      return evaluate_control(inst, operands, scope);
    case Opcode::kAsyncStart:
      return evaluate_async_start(inst, operands, scope);
    case Opcode::kAsyncUpdate:
      if (operands.size() != 1) return op_error(inst, "needs one operand");
      return *operands[0];
    case Opcode::kAsyncDone:
      return evaluate_async_done(comp, inst, operands);
    case Opcode::kBitcast:
      if (auto moved = bitcast_with_layouts(comp, inst, operands)) return std::move(moved).value();
      break;
    default:
      break;
  }
  for (const hlo::Shape* leaf : inst.shape.leaves()) {
    if (leaf->element_count() > kMaxElements) {
      return op_error(inst, fmt::format("{} has more than {} elements, too large for the cpu backend "
                                        "(use --backend sim or cuda)", hlo::to_string(*leaf), kMaxElements));
    }
  }
  auto start = std::chrono::steady_clock::now();
  SL_ASSIGN_OR_RETURN(Value result, evaluate_op(inst, inst, operands, scope));
  auto end = std::chrono::steady_clock::now();
  if (record_ && scope.traced && does_work(inst)) {
    RawEvent e;
    e.stream = stream_for(inst, scope);
    e.kind = event_kind_of(inst);
    e.name = inst.name;
    e.instruction = scope.attributed.empty() ? inst.name : scope.attributed;
    e.start = start;
    e.end = end;
    e.bytes = leaf_bytes(result);
    for (const Value* v : operands) e.bytes += leaf_bytes(*v);
    e.flops = flops_of(inst, operands, result);
    events_.push_back(std::move(e));
  }
  return result;
}

Result<Value> Evaluator::evaluate_op(const hlo::Instruction& inst, const hlo::Instruction& key,
                                     const std::vector<const Value*>& operands, const Scope& scope) {
  (void)scope;
  const Opcode op = inst.opcode;
  if (hlo::is_collective(op)) return evaluate_collective(inst, key, operands);
  switch (op) {
    case Opcode::kCustomCall:
      return evaluate_custom_call(inst, operands);
    case Opcode::kSend: case Opcode::kRecv: case Opcode::kSendDone: case Opcode::kRecvDone:
      return evaluate_p2p(inst, operands);
    case Opcode::kConstant:
      if (inst.shape.is_tuple()) {
        // The parser keeps every leaf's values in order, each leaf row-major.
        std::vector<Literal> leaves;
        size_t next = 0;
        for (const hlo::Shape* leaf : inst.shape.leaves()) {
          const auto n = static_cast<size_t>(leaf->element_count());
          if (!leaf->is_array() || hlo::is_complex(leaf->type) || next + n > inst.literal.size()) {
            return op_error(inst, "has a tuple element the cpu backend cannot hold (complex or token)");
          }
          Literal l{*leaf, std::vector<double>(inst.literal.begin() + static_cast<std::ptrdiff_t>(next),
                                               inst.literal.begin() + static_cast<std::ptrdiff_t>(next + n))};
          for (double& v : l.values) v = round_to_type(v, leaf->type);
          leaves.push_back(std::move(l));
          next += n;
        }
        size_t taken = 0;
        return value_from_leaves(inst.shape, leaves, &taken);
      }
      break;
    case Opcode::kReduce:
      return evaluate_reduce(inst, operands);
    case Opcode::kFusion: {
      if (inst.called.empty()) return op_error(inst, "fusion without calls=");
      std::vector<Value> args;
      for (const Value* v : operands) args.push_back(*v);
      Scope inner;
      inner.traced = false;  // the fusion is one kernel
      return evaluate(inst.called[0], args, inner);
    }
    case Opcode::kReplicaId:
    case Opcode::kPartitionId: {
      double id = static_cast<double>(op == Opcode::kReplicaId ? context_.replica : context_.partition);
      hlo::Shape shape = inst.shape.is_array() ? inst.shape : hlo::Shape::array(hlo::PrimitiveType::kU32, {});
      return Value::of(Literal{shape, {round_to_type(id, shape.type)}});
    }
    case Opcode::kCall:
    case Opcode::kWhile:
    case Opcode::kConditional:
      return evaluate_control(inst, operands, scope);
    default:
      break;
  }
  if (is_extended(op)) return evaluate_extended(inst, operands);
  Operands arrays;
  for (const Value* v : operands) {
    if (v->is_tuple()) return op_error(inst, "operands must be arrays, got a tuple");
    arrays.push_back(&v->literal());
  }
  if (hlo::is_elementwise(op)) {
    SL_ASSIGN_OR_RETURN(Literal out, eval_elementwise(inst, arrays));
    return Value::of(std::move(out));
  }
  if (op == Opcode::kDot) {
    if (arrays.size() != 2) return op_error(inst, "dot takes 2 operands");
    const double flops = 2.0 * static_cast<double>(inst.shape.element_count()) *
                         std::sqrt(static_cast<double>(arrays[0]->shape.element_count()) *
                                   static_cast<double>(arrays[1]->shape.element_count()) /
                                   std::max<double>(1.0, static_cast<double>(inst.shape.element_count())));
    if (flops > kMaxDotFlops) {
      return op_error(inst, fmt::format("a {:.3g} GFLOP dot is too large for the cpu backend (limit {:.3g}; "
                                        "use --backend sim or cuda)", flops / 1e9, kMaxDotFlops / 1e9));
    }
    auto out = eval_dot(inst.dot, *arrays[0], *arrays[1], inst.shape);
    if (!out) return op_error(inst, out.status().message());
    return Value::of(std::move(out).value());
  }
  switch (op) {
    case Opcode::kBitcastConvert: {
      if (arrays.size() != 1) return op_error(inst, "takes one operand");
      auto out = eval_bitcast_convert(inst.shape, *arrays[0]);
      if (!out) return op_error(inst, out.status().message());
      return Value::of(std::move(out).value());
    }
    case Opcode::kConstant: case Opcode::kIota: case Opcode::kCopy: case Opcode::kBroadcast:
    case Opcode::kReshape: case Opcode::kBitcast: case Opcode::kTranspose: case Opcode::kSlice:
    case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice: case Opcode::kConcatenate: {
      if (inst.shape.element_count() > kMaxElements) {
        return op_error(inst, fmt::format("{} is too large for the cpu backend", hlo::to_string(inst.shape)));
      }
      SL_ASSIGN_OR_RETURN(Literal out, eval_data_op(inst, arrays));
      return Value::of(std::move(out));
    }
    default:
      return op_error(inst, "is not supported by the cpu backend");
  }
}

Result<Value> Evaluator::evaluate_custom_call(const hlo::Instruction& inst, const std::vector<const Value*>& operands) {
  const std::string& target = inst.custom_call_target;
  // JAX's sharding annotation (before XLA's SPMD partitioner) leaves its
  // operand as it is: a module that still has it is the global program.
  if (target == "Sharding" && operands.size() == 1 && !operands[0]->is_tuple() &&
      operands[0]->literal().shape == inst.shape) {
    return *operands[0];
  }
  if (target != "__cublas$gemm" && target != "__cublas$lt$matmul") {
    return op_error(inst, fmt::format("custom_call_target=\"{}\" is an opaque kernel the cpu backend cannot "
                                      "evaluate (it evaluates \"__cublas$gemm\" and \"__cublas$lt$matmul\"; "
                                      "use --backend sim or cuda)", target));
  }
  Operands arrays;
  for (const Value* v : operands) {
    if (v->is_tuple()) return op_error(inst, "gemm operands must be arrays");
    arrays.push_back(&v->literal());
  }
  const bool tuple = inst.shape.is_tuple();
  if (tuple && inst.shape.elements.empty()) return op_error(inst, "empty result tuple");
  std::vector<hlo::Shape> outputs;
  if (tuple) {
    for (const hlo::Shape& e : inst.shape.elements) outputs.push_back(e);
  } else {
    outputs.push_back(inst.shape);
  }
  if (arrays.size() >= 2) {
    const double out_elems = std::max<double>(1.0, static_cast<double>(outputs[0].element_count()));
    const double flops = 2.0 * out_elems *
                         std::sqrt(static_cast<double>(arrays[0]->shape.element_count()) *
                                   static_cast<double>(arrays[1]->shape.element_count()) / out_elems);
    if (flops > kMaxDotFlops) {
      return op_error(inst, fmt::format("a {:.3g} GFLOP gemm is too large for the cpu backend (limit {:.3g}; "
                                        "use --backend sim or cuda)", flops / 1e9, kMaxDotFlops / 1e9));
    }
  }
  auto out = eval_gemm(inst, arrays, outputs);
  if (!out) return op_error(inst, out.status().message());
  std::vector<Literal> results = std::move(out).value();
  if (!tuple) return Value::of(std::move(results[0]));
  // (output, [aux], [amax], s8[...] workspace): what the gemm did not fill
  // holds nothing meaningful.
  std::vector<Value> elements;
  for (size_t i = 0; i < outputs.size(); ++i) {
    elements.push_back(i < results.size() ? Value::of(std::move(results[i])) : zeros_value(outputs[i]));
  }
  return Value::tuple(std::move(elements));
}

Result<Value> Evaluator::evaluate_reduce(const hlo::Instruction& inst, const std::vector<const Value*>& operands) {
  Operands arrays;
  for (const Value* v : operands) v->collect_leaves(&arrays);
  std::vector<hlo::Shape> result_shapes;
  for (const hlo::Shape* s : inst.shape.leaves()) result_shapes.push_back(*s);
  std::vector<hlo::PrimitiveType> types;
  for (size_t i = 0; i < arrays.size() / 2; ++i) types.push_back(arrays[i]->shape.type);
  SL_ASSIGN_OR_RETURN(Combiner combine, make_combiner(inst, types));
  SL_ASSIGN_OR_RETURN(std::vector<Literal> out, eval_reduce(inst, arrays, result_shapes, combine));
  size_t next = 0;
  return value_from_leaves(inst.shape, out, &next);
}

Result<Combiner> Evaluator::make_combiner(const hlo::Instruction& inst, const std::vector<hlo::PrimitiveType>& types,
                                          size_t which) {
  if (inst.called.size() <= which) return op_error(inst, "needs to_apply=");
  const int index = inst.called[which];
  if (index < 0 || static_cast<size_t>(index) >= module_.computations.size()) {
    return op_error(inst, "to_apply computation does not exist");
  }
  const hlo::Computation& comp = module_.computations[static_cast<size_t>(index)];
  const size_t n = types.size();
  if (comp.parameters.size() != 2 * n) {
    return op_error(inst, fmt::format("to_apply '{}' takes {} parameters, expected {}", comp.name,
                                      comp.parameters.size(), 2 * n));
  }
  // Fast path: ROOT = op(p0, p1) for one binary arithmetic op.
  if (n == 1 && comp.root >= 0) {
    const hlo::Instruction& root = comp.instructions[static_cast<size_t>(comp.root)];
    const int p0 = comp.parameters[0], p1 = comp.parameters[1];
    const bool direct = root.operands.size() == 2 && root.operands[0] == p0 && root.operands[1] == p1;
    const bool swapped = root.operands.size() == 2 && root.operands[0] == p1 && root.operands[1] == p0;
    if ((direct || swapped) && root.opcode != Opcode::kCompare && hlo::is_elementwise(root.opcode)) {
      auto fn = binary_fn(root.opcode, types[0]);
      if (fn) {
        BinaryFn f = fn.value();
        hlo::PrimitiveType type = types[0];
        return Combiner([f, type, swapped](std::vector<double>& a, const std::vector<double>& x) {
          a[0] = round_to_type(swapped ? f(x[0], a[0]) : f(a[0], x[0]), type);
          return ok_status();
        });
      }
    }
  }
  // General path: evaluate the computation on scalars (accumulators first).
  return Combiner([this, index, n](std::vector<double>& a, const std::vector<double>& x) -> Status {
    std::vector<double> args(a);
    args.insert(args.end(), x.begin(), x.end());
    SL_ASSIGN_OR_RETURN(std::vector<double> result, call_on_scalars(index, args));
    if (result.size() != n) return invalid_input("reduction computation returned the wrong number of values");
    a = std::move(result);
    return ok_status();
  });
}

Result<std::vector<double>> Evaluator::call_on_scalars(int index, const std::vector<double>& args) {
  const hlo::Computation& comp = module_.computations[static_cast<size_t>(index)];
  if (comp.parameters.size() != args.size()) {
    return invalid_input(fmt::format("computation '{}' takes {} parameters, got {}", comp.name,
                                     comp.parameters.size(), args.size()));
  }
  std::vector<Value> values;
  for (size_t i = 0; i < args.size(); ++i) {
    const hlo::Shape& shape = comp.instructions[static_cast<size_t>(comp.parameters[i])].shape;
    values.push_back(Value::of(Literal{shape, {round_to_type(args[i], shape.type)}}));
  }
  Scope inner;
  inner.traced = false;
  SL_ASSIGN_OR_RETURN(Value result, evaluate(index, values, inner));
  std::vector<const Literal*> leaves;
  result.collect_leaves(&leaves);
  std::vector<double> out;
  for (const Literal* l : leaves) {
    if (l->values.size() != 1) return invalid_input(fmt::format("computation '{}' must return scalars", comp.name));
    out.push_back(l->values[0]);
  }
  return out;
}

Result<Value> Evaluator::evaluate_control(const hlo::Instruction& inst, const std::vector<const Value*>& operands,
                                          const Scope& scope) {
  std::vector<Value> args;
  for (const Value* v : operands) args.push_back(*v);
  switch (inst.opcode) {
    case Opcode::kCall: {
      if (inst.called.empty()) return op_error(inst, "call without to_apply=");
      Scope inner = scope;
      auto requested = inst.requested_stream();
      if (scope.stream < 0 && requested && *requested != sched::kMainStream) {
        // Runs on its own stream, wrapped in an async pair by lowering.
        inner.stream = static_cast<int>(*requested);
        if (inner.attributed.empty()) inner.attributed = inst.name;
      }
      return evaluate(inst.called[0], args, inner);
    }
    case Opcode::kWhile: {
      if (inst.called.size() < 2) return op_error(inst, "while needs condition= and body=");
      if (args.size() != 1) return op_error(inst, "while takes one operand");
      Value state = std::move(args[0]);
      for (int64_t iteration = 0;; ++iteration) {
        if (iteration >= options_.max_while_iterations) {
          return op_error(inst, fmt::format("ran {} iterations without its condition becoming false (the cpu "
                                            "backend's limit; raise it to run longer loops)",
                                            options_.max_while_iterations));
        }
        SL_ASSIGN_OR_RETURN(Value cond, evaluate(inst.called[0], {state}, scope));
        if (cond.is_tuple() || cond.literal().values.size() != 1) {
          return op_error(inst, "condition must return a pred[] scalar");
        }
        if (cond.literal().values[0] == 0.0) break;
        SL_ASSIGN_OR_RETURN(state, evaluate(inst.called[1], {state}, scope));
      }
      return state;
    }
    case Opcode::kConditional: {
      if (args.empty() || args[0].is_tuple() || args[0].literal().values.size() != 1) {
        return op_error(inst, "conditional needs a scalar pred or s32 selector");
      }
      const size_t branches = inst.called.size();
      if (branches == 0 || args.size() != branches + 1) {
        return op_error(inst, fmt::format("conditional has {} branch computations and {} branch operands",
                                          branches, args.size() - 1));
      }
      const Literal& selector = args[0].literal();
      size_t branch = 0;
      if (selector.shape.type == hlo::PrimitiveType::kPred) {
        branch = selector.values[0] != 0.0 ? 0 : 1;  // true_computation, false_computation
        if (branches != 2) return op_error(inst, "a pred conditional needs two branches");
      } else {
        double index = selector.values[0];
        // XLA: an out-of-range index runs the last branch.
        branch = (index < 0 || index >= static_cast<double>(branches)) ? branches - 1 : static_cast<size_t>(index);
      }
      return evaluate(inst.called[branch], {args[branch + 1]}, scope);
    }
    default:
      return op_error(inst, "is not a control-flow op");
  }
}

}  // namespace sl::exec::cpu
