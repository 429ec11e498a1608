// Elementwise ops: operands of one shape (select: a pred mask of the same
// dimensions), result of that shape (compare: pred), element types each op
// accepts.

#include <fmt/format.h>

#include "core/hlo/verify_context.h"

namespace sl::hlo::verify_detail {
namespace {

size_t arity(Opcode op) {
  switch (op) {
    case Opcode::kNegate:
    case Opcode::kAbs:
    case Opcode::kExp:
      return 1;
    case Opcode::kSelect:
      return 3;
    default:
      return 2;
  }
}

// Which element types the op takes; empty when it takes every array type.
std::string_view type_rule(Opcode op, PrimitiveType type) {
  switch (op) {
    case Opcode::kExp:
      return is_floating(type) ? "" : "a floating-point type";
    case Opcode::kAnd:
    case Opcode::kOr:
      return type == PrimitiveType::kPred || is_integral(type) ? "" : "pred or an integer type";
    case Opcode::kNegate:
    case Opcode::kAbs:
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kRemainder:
      return type == PrimitiveType::kPred ? "a numeric type" : "";
    default:
      return "";
  }
}

}  // namespace

void verify_elementwise(const Site& site) {
  const Opcode op = site.inst.opcode;
  const std::string name = written_opcode(site.inst);
  if (!expect_operand_count(site, arity(op))) return;
  for (size_t i = 0; i < site.operand_count(); ++i) {
    if (!expect_array_operand(site, i)) return;
  }
  // The operands that carry the data: all of them, except select's predicate.
  const size_t first = op == Opcode::kSelect ? 1 : 0;
  const Shape& data = site.operand_shape(first);
  for (size_t i = first + 1; i < site.operand_count(); ++i) {
    if (site.operand_shape(i) != data) {
      site.error(fmt::format("{} operands must have the same shape, but operand {} ({}) is {} and operand {} ({}) is {}",
                             name, first, ref(*site.operands[first]), str(data), i, ref(*site.operands[i]),
                             str(site.operand_shape(i))));
      return;
    }
  }
  if (std::string_view rule = type_rule(op, data.type); !rule.empty()) {
    site.error(fmt::format("{} needs {}, but its operands are {}", name, rule, primitive_type_name(data.type)));
    return;
  }
  if (op == Opcode::kSelect) {
    const Shape& pred = site.operand_shape(0);
    if (pred.type != PrimitiveType::kPred || (pred.rank() != 0 && pred.dims != data.dims)) {
      site.error(fmt::format("select predicate {} must be pred[] or pred with the dimensions of {}", str(pred),
                             str(data)));
      return;
    }
  }
  if (op == Opcode::kCompare) {
    if (!site.inst.comparison_direction) site.error("compare needs direction=EQ|NE|LT|LE|GT|GE");
    expect_shape(site, Shape::array(PrimitiveType::kPred, data.dims));
    return;
  }
  expect_shape(site, data);
}

}  // namespace sl::hlo::verify_detail
