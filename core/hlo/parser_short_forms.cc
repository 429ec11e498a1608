// HLO text parser: the short forms of XLA's text.
// - Result shapes of instructions written without one. XLA's parser infers
//   them for the opcodes of its CanInferShape; this covers the ones whose
//   result follows from the operands and attributes alone (not those that
//   need a called computation's signature, which may come later).
// - Tuple-element operands `%t#2` (current XLA prints them instead of a
//   get-tuple-element): each becomes a get-tuple-element instruction named
//   `t#2`, placed before its first user and shared by later users.

#include <fmt/format.h>

#include <charconv>

#include "core/hlo/parser_impl.h"
#include "core/hlo/shape_inference.h"

namespace sl::hlo::parser_internal {
namespace {

PrimitiveType real_type(PrimitiveType t) {
  if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
  return t;
}

Shape with_type(const Shape& s, PrimitiveType t) {
  Shape out = s;
  out.type = t;
  return out;
}

// What each opcode's result is, given its operand shapes; empty message or why
// not. `why_not` is only set for opcodes XLA can infer but this parser cannot.
std::string infer(const Instruction& inst, const std::vector<const Shape*>& in, Shape& out) {
  const Opcode op = inst.opcode;
  auto need = [&](size_t n) -> std::string {
    if (in.size() >= n) return {};
    return fmt::format("{} needs {} operand(s) to infer its shape, got {}", opcode_name(op), n, in.size());
  };
  auto array0 = [&]() -> std::string {
    std::string p = need(1);
    if (!p.empty()) return p;
    return in[0]->is_array() ? std::string{} : fmt::format("operand 0 of {} is not an array", opcode_name(op));
  };
  std::string p;
  switch (op) {
    case Opcode::kCompare:
    case Opcode::kIsFinite:
      if (!(p = array0()).empty()) return p;
      out = with_type(*in[0], PrimitiveType::kPred);
      return {};
    case Opcode::kAbs:
    case Opcode::kReal:
    case Opcode::kImag:
      if (!(p = array0()).empty()) return p;
      out = with_type(*in[0], real_type(in[0]->type));
      return {};
    case Opcode::kComplex:
      if (!(p = array0()).empty()) return p;
      out = with_type(*in[0], in[0]->type == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64);
      return {};
    case Opcode::kSelect:
    case Opcode::kClamp:
      if (!(p = need(3)).empty()) return p;
      out = *in[1];
      return {};
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (const Shape* s : in) elements.push_back(*s);
      out = Shape::tuple(std::move(elements));
      return {};
    }
    case Opcode::kGetTupleElement:
      if (!(p = need(1)).empty()) return p;
      if (!in[0]->is_tuple() || inst.tuple_index < 0 ||
          static_cast<size_t>(inst.tuple_index) >= in[0]->elements.size()) {
        return fmt::format("index={} is not an element of the operand {}", inst.tuple_index, to_string(*in[0]));
      }
      out = in[0]->elements[static_cast<size_t>(inst.tuple_index)];
      return {};
    case Opcode::kAfterAll:
      out = Shape::token();
      return {};
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      out = Shape::array(PrimitiveType::kU32, {});
      return {};
    case Opcode::kGetDimensionSize:
      out = Shape::array(PrimitiveType::kS32, {});
      return {};
    case Opcode::kAddDependency:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kWhile:
    case Opcode::kCopy:
    case Opcode::kReverse:
    case Opcode::kSetDimensionSize:
      if (!(p = need(1)).empty()) return p;
      out = *in[0];
      return {};
    case Opcode::kBroadcast:
      // XLA's parser reads `dimensions` here as the sizes to prepend.
      if (!(p = array0()).empty()) return p;
      out = Shape::array(in[0]->type, inst.dimensions);
      out.dims.insert(out.dims.end(), in[0]->dims.begin(), in[0]->dims.end());
      return {};
    case Opcode::kTranspose:
      if (!(p = array0()).empty()) return p;
      if (inst.dimensions.size() != in[0]->dims.size()) return "transpose dimensions do not match the operand rank";
      out = Shape::array(in[0]->type, {});
      for (int64_t d : inst.dimensions) {
        if (d < 0 || d >= in[0]->rank()) return "transpose dimensions are not a permutation";
        out.dims.push_back(in[0]->dims[static_cast<size_t>(d)]);
      }
      return {};
    case Opcode::kConcatenate: {
      if (!(p = array0()).empty()) return p;
      if (inst.dimensions.size() != 1 || inst.dimensions[0] < 0 || inst.dimensions[0] >= in[0]->rank()) {
        return "concatenate needs dimensions={d} within the operand rank";
      }
      out = *in[0];
      const auto d = static_cast<size_t>(inst.dimensions[0]);
      for (size_t i = 1; i < in.size(); ++i) {
        if (!in[i]->is_array() || in[i]->rank() != in[0]->rank()) return "concatenate operands differ in rank";
        out.dims[d] += in[i]->dims[d];
      }
      return {};
    }
    case Opcode::kPad:
      if (!(p = array0()).empty()) return p;
      if (inst.padding.size() != in[0]->dims.size()) return "padding does not match the operand rank";
      out = *in[0];
      for (size_t i = 0; i < out.dims.size(); ++i) {
        const PadDim& pd = inst.padding[i];
        int64_t n = out.dims[i];
        out.dims[i] = pd.low + pd.high + n + (n > 0 ? (n - 1) * pd.interior : 0);
      }
      return {};
    case Opcode::kDot: {
      if (!(p = need(2)).empty()) return p;
      Result<Shape> r = infer_dot_shape(*in[0], *in[1], inst.dot, in[0]->type);
      if (!r.is_ok()) return std::string(r.status().message());
      out = std::move(r).value();
      return {};
    }
    case Opcode::kReduce: {
      // n inputs then n init values; each result drops the reduced dims.
      if (in.size() < 2 || in.size() % 2 != 0) return "reduce needs inputs and as many init values";
      std::vector<Shape> results;
      for (size_t i = 0; i < in.size() / 2; ++i) {
        Shape r = Shape::array(in[in.size() / 2 + i]->type, {});
        for (size_t d = 0; d < in[i]->dims.size(); ++d) {
          bool reduced = false;
          for (int64_t x : inst.dimensions) reduced = reduced || x == static_cast<int64_t>(d);
          if (!reduced) r.dims.push_back(in[i]->dims[d]);
        }
        results.push_back(std::move(r));
      }
      out = results.size() == 1 ? results[0] : Shape::tuple(std::move(results));
      return {};
    }
    case Opcode::kSort:
    case Opcode::kScatter: {
      const size_t n = op == Opcode::kSort ? in.size() : in.size() / 2;
      if (n == 0) return fmt::format("{} has no operands", opcode_name(op));
      std::vector<Shape> results;
      for (size_t i = 0; i < n; ++i) results.push_back(*in[i]);
      out = n == 1 ? results[0] : Shape::tuple(std::move(results));
      return {};
    }
    case Opcode::kTopK: {
      if (!(p = array0()).empty()) return p;
      if (!inst.k || in[0]->dims.empty()) return "topk needs k= and an operand of rank >= 1";
      Shape values = *in[0];
      values.dims.back() = *inst.k;
      out = Shape::tuple({values, with_type(values, PrimitiveType::kS32)});
      return {};
    }
    default:
      break;
  }
  if (is_elementwise(op) && op != Opcode::kConvert && op != Opcode::kBitcastConvert &&
      op != Opcode::kStochasticConvert && op != Opcode::kReducePrecision) {
    if (!(p = array0()).empty()) return p;
    out = *in[0];
    return {};
  }
  return fmt::format("expected a shape, got '{}' (its result shape cannot be inferred here)", opcode_name(op));
}

}  // namespace

std::string Parser::infer_result_shape(const Computation& computation, Instruction& inst) {
  if (inst.opcode == Opcode::kParameter || inst.opcode == Opcode::kConstant || is_async(inst.opcode)) {
    return fmt::format("expected a shape, got '{}' (its result shape cannot be inferred)", opcode_name(inst.opcode));
  }
  std::vector<const Shape*> in;
  in.reserve(inst.operands.size());
  for (int operand : inst.operands) {
    if (is_nested_operand(operand)) {
      in.push_back(&nested_[nested_slot(operand)].shape);
      continue;
    }
    if (operand < 0) return "the result shape cannot be inferred from an operand defined later";
    in.push_back(&computation.instructions[static_cast<size_t>(operand)].shape);
  }
  return infer(inst, in, inst.shape);
}

int Parser::resolve_element(Computation& computation, std::unordered_map<std::string_view, int>& names,
                            std::string_view name, SourceLoc loc) {
  if (auto it = names.find(name); it != names.end()) return it->second;
  size_t hash = name.rfind('#');
  std::string_view digits = hash == std::string_view::npos ? std::string_view{} : name.substr(hash + 1);
  size_t element = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), element);
  if (hash == 0 || digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size()) {
    fail(loc, fmt::format("undefined operand %{}", name));
    return -1;
  }
  const int tuple = resolve_element(computation, names, name.substr(0, hash), loc);
  if (tuple < 0) return -1;
  const Shape& shape = computation.instructions[static_cast<size_t>(tuple)].shape;
  if (!shape.is_tuple() || element >= shape.elements.size()) {
    fail(loc, fmt::format("%{} has no tuple element {} (its shape is {})", name.substr(0, hash), element,
                          to_string(shape)));
    return -1;
  }
  Shape element_shape = shape.elements[element];  // copied: emplace_back may move `shape`
  Instruction& gte = computation.instructions.emplace_back();
  gte.name = std::string(name);
  gte.opcode = Opcode::kGetTupleElement;
  gte.shape = std::move(element_shape);
  gte.operands = {tuple};
  gte.tuple_index = static_cast<int64_t>(element);
  gte.loc = loc;
  gte.opcode_loc = loc;
  const int index = static_cast<int>(computation.instructions.size()) - 1;
  names.emplace(name, index);
  return index;
}

bool Parser::materialize_element_refs(Computation& computation, std::unordered_map<std::string_view, int>& names,
                                      std::vector<PendingOperand>& pending, int& index) {
  // The user was built in place at `index`; take it out, append the new
  // get-tuple-elements, and put it back after them. Rare, so the move is fine.
  Instruction user = std::move(computation.instructions.back());
  computation.instructions.pop_back();
  const int first = index;
  for (const ElementRef& ref : element_refs_) {
    const int operand = resolve_element(computation, names, ref.name, ref.loc);
    if (operand < 0) return false;
    user.operands[ref.slot] = operand;
  }
  element_refs_.clear();
  index = static_cast<int>(computation.instructions.size());
  for (PendingOperand& p : pending) {
    if (p.instruction == first) p.instruction = index;
  }
  computation.instructions.push_back(std::move(user));
  return true;
}

}  // namespace sl::hlo::parser_internal
