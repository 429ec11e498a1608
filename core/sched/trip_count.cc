#include "core/sched/trip_count.h"

#include <vector>

namespace sl::sched {
namespace {

using hlo::Opcode;

constexpr int kMaxDepth = 16;  // fusions nest this deep at most here

// Evaluates scalar integer (and pred) values of one computation. Parameter
// `p` is bound to `arguments[p]`; element `element` of a tuple parameter 0
// (the loop state) is `state` when set. Everything else is unknown.
class Scalars {
 public:
  Scalars(const hlo::Module& module, const hlo::Computation& computation, std::vector<std::optional<int64_t>> arguments,
          int64_t element, std::optional<int64_t> state, int depth)
      : module_(module), computation_(computation), arguments_(std::move(arguments)), element_(element),
        state_(state), depth_(depth) {}

  std::optional<int64_t> value(int index) const {
    if (index < 0 || index >= static_cast<int>(computation_.instructions.size())) return std::nullopt;
    const hlo::Instruction& inst = computation_.instructions[static_cast<size_t>(index)];
    auto operand = [&](size_t k) -> std::optional<int64_t> {
      return k < inst.operands.size() ? value(inst.operands[k]) : std::nullopt;
    };
    const bool scalar = inst.shape.is_array() && inst.shape.rank() == 0 &&
                        (hlo::is_integral(inst.shape.type) || inst.shape.type == hlo::PrimitiveType::kPred);
    if (!scalar) return std::nullopt;
    switch (inst.opcode) {
      case Opcode::kConstant:
        if (inst.literal.size() != 1) return std::nullopt;
        return static_cast<int64_t>(inst.literal[0]);
      case Opcode::kParameter:
        if (inst.parameter_number < 0 || inst.parameter_number >= static_cast<int64_t>(arguments_.size())) {
          return std::nullopt;
        }
        return arguments_[static_cast<size_t>(inst.parameter_number)];
      case Opcode::kGetTupleElement: {
        if (inst.operands.empty() || inst.tuple_index != element_ || !state_) return std::nullopt;
        const hlo::Instruction& tuple = computation_.instructions[static_cast<size_t>(inst.operands[0])];
        if (tuple.opcode != Opcode::kParameter || tuple.parameter_number != 0) return std::nullopt;
        return state_;
      }
      case Opcode::kCopy: case Opcode::kConvert: case Opcode::kBitcast: case Opcode::kReshape:
        return operand(0);
      case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: {
        std::optional<int64_t> a = operand(0), b = operand(1);
        if (!a || !b) return std::nullopt;
        int64_t r = 0;
        const bool overflow = inst.opcode == Opcode::kAdd        ? __builtin_add_overflow(*a, *b, &r)
                              : inst.opcode == Opcode::kSubtract ? __builtin_sub_overflow(*a, *b, &r)
                                                                 : __builtin_mul_overflow(*a, *b, &r);
        if (overflow) return std::nullopt;
        return r;
      }
      case Opcode::kCompare: {
        std::optional<int64_t> a = operand(0), b = operand(1);
        if (!a || !b || !inst.comparison_direction) return std::nullopt;
        switch (*inst.comparison_direction) {
          case hlo::ComparisonDirection::kEq: return *a == *b;
          case hlo::ComparisonDirection::kNe: return *a != *b;
          case hlo::ComparisonDirection::kLt: return *a < *b;
          case hlo::ComparisonDirection::kLe: return *a <= *b;
          case hlo::ComparisonDirection::kGt: return *a > *b;
          case hlo::ComparisonDirection::kGe: return *a >= *b;
        }
        return std::nullopt;
      }
      case Opcode::kFusion: case Opcode::kCall: {
        if (inst.called.empty() || depth_ >= kMaxDepth) return std::nullopt;
        const int callee = inst.called[0];
        if (callee < 0 || callee >= static_cast<int>(module_.computations.size())) return std::nullopt;
        std::vector<std::optional<int64_t>> arguments;
        for (size_t k = 0; k < inst.operands.size(); ++k) arguments.push_back(operand(k));
        const hlo::Computation& body = module_.computations[static_cast<size_t>(callee)];
        return Scalars(module_, body, std::move(arguments), -1, std::nullopt, depth_ + 1).value(body.root);
      }
      default:
        return std::nullopt;
    }
  }

  // Element `k` of a tuple-valued instruction written as tuple(...).
  std::optional<int64_t> element_of(int index, int64_t k) const {
    if (index < 0 || index >= static_cast<int>(computation_.instructions.size())) return std::nullopt;
    const hlo::Instruction& inst = computation_.instructions[static_cast<size_t>(index)];
    if (inst.opcode != Opcode::kTuple || k < 0 || k >= static_cast<int64_t>(inst.operands.size())) return std::nullopt;
    return value(inst.operands[static_cast<size_t>(k)]);
  }

 private:
  const hlo::Module& module_;
  const hlo::Computation& computation_;
  std::vector<std::optional<int64_t>> arguments_;
  int64_t element_;
  std::optional<int64_t> state_;
  int depth_;
};

const hlo::Computation* callee(const hlo::Module& module, const hlo::Instruction& inst, size_t k) {
  if (k >= inst.called.size()) return nullptr;
  const int c = inst.called[k];
  if (c < 0 || c >= static_cast<int>(module.computations.size())) return nullptr;
  return &module.computations[static_cast<size_t>(c)];
}

}  // namespace

std::optional<int64_t> infer_trip_count(const hlo::Module& module, const hlo::Computation& parent,
                                        const hlo::Instruction& while_loop, int64_t limit) {
  const hlo::Computation* condition = callee(module, while_loop, 0);
  const hlo::Computation* body = callee(module, while_loop, 1);
  if (!condition || !body || while_loop.operands.size() != 1 || !while_loop.shape.is_tuple()) return std::nullopt;
  const Scalars init(module, parent, {}, -1, std::nullopt, 0);
  for (int64_t k = 0; k < static_cast<int64_t>(while_loop.shape.elements.size()); ++k) {
    std::optional<int64_t> iv = init.element_of(while_loop.operands[0], k);
    if (!iv) continue;
    // The condition must read the induction variable (a constant condition is
    // no bound), and the body must move it (a zero step never ends).
    if (Scalars(module, *condition, {}, k, std::nullopt, 0).value(condition->root)) continue;
    // Run the induction variable alone; any step that needs more of the state fails.
    int64_t trips = 0;
    for (;;) {
      std::optional<int64_t> go = Scalars(module, *condition, {}, k, iv, 0).value(condition->root);
      if (!go) break;
      if (*go == 0) return trips;
      if (++trips > limit) return trips;  // more than `limit`: the caller refuses it
      std::optional<int64_t> next = Scalars(module, *body, {}, k, iv, 0).element_of(body->root, k);
      if (!next || *next == *iv) break;
      iv = next;
    }
  }
  return std::nullopt;
}

}  // namespace sl::sched
