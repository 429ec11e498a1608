// Elementwise ops: operands of one shape (select: a pred mask of the same
// dimensions; clamp: scalar or same-shape bounds), result of that shape with
// the element type XLA's shape inference gives. Float precision may differ
// between operands (XLA allows mixed precision after optimization), and
// binary operands may broadcast size-1 dimensions as XLA's shape inference does.

#include <fmt/format.h>

#include "core/hlo/verify_context.h"

namespace sl::hlo::verify_detail {
namespace {

size_t arity(Opcode op) {
  if (op == Opcode::kSelect || op == Opcode::kClamp) return 3;
  return is_unary_elementwise(op) ? 1 : 2;
}

// Which element types the op takes; empty when it takes every array type.
std::string_view type_rule(Opcode op, PrimitiveType type) {
  const bool real_float = is_floating(type);
  const bool fp = real_float || is_complex(type);
  switch (op) {
    case Opcode::kExp: case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p: case Opcode::kLogistic:
    case Opcode::kSqrt: case Opcode::kRsqrt: case Opcode::kCbrt: case Opcode::kTanh: case Opcode::kTan:
    case Opcode::kSin: case Opcode::kCos: case Opcode::kSinh: case Opcode::kCosh: case Opcode::kAsin:
    case Opcode::kAcos: case Opcode::kAtan: case Opcode::kAsinh: case Opcode::kAcosh: case Opcode::kAtanh:
    case Opcode::kPower:
      return fp ? "" : "a floating-point or complex type";
    case Opcode::kErf: case Opcode::kFloor: case Opcode::kCeil: case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven: case Opcode::kIsFinite: case Opcode::kAtan2: case Opcode::kReducePrecision:
    case Opcode::kComplex:
      return real_float ? "" : "a floating-point type";
    case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor: case Opcode::kNot:
      return type == PrimitiveType::kPred || is_integral(type) ? "" : "pred or an integer type";
    case Opcode::kShiftLeft: case Opcode::kShiftRightArithmetic: case Opcode::kShiftRightLogical:
    case Opcode::kClz: case Opcode::kPopulationCount: case Opcode::kMulhi:
      return is_integral(type) ? "" : "an integer type";
    case Opcode::kReal: case Opcode::kImag:
      return fp ? "" : "a floating-point or complex type";
    case Opcode::kNegate: case Opcode::kAbs: case Opcode::kSign: case Opcode::kAdd: case Opcode::kSubtract:
    case Opcode::kMultiply: case Opcode::kDivide: case Opcode::kRemainder:
      return type == PrimitiveType::kPred ? "a numeric type" : "";
    default:
      return "";
  }
}

// The real type of a complex type's parts.
PrimitiveType component_type(PrimitiveType type) {
  if (type == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (type == PrimitiveType::kC128) return PrimitiveType::kF64;
  return type;
}

// The element type of the result, from the (data) operand type.
PrimitiveType result_type(Opcode op, PrimitiveType in) {
  switch (op) {
    case Opcode::kCompare: case Opcode::kIsFinite: return PrimitiveType::kPred;
    case Opcode::kReal: case Opcode::kImag: case Opcode::kAbs: return component_type(in);
    case Opcode::kComplex: return in == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64;
    default: return in;
  }
}

bool same_element_type(PrimitiveType a, PrimitiveType b) {
  return a == b || (is_floating(a) && is_floating(b)) || (is_complex(a) && is_complex(b));
}

// XLA's degenerate broadcasting: equal ranks, each dimension equal or 1.
bool broadcast_dims(const Shape& a, const Shape& b, std::vector<int64_t>& out) {
  if (a.rank() != b.rank()) return false;
  out.clear();
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i] == b.dims[i] || b.dims[i] == 1) {
      out.push_back(a.dims[i]);
    } else if (a.dims[i] == 1) {
      out.push_back(b.dims[i]);
    } else {
      return false;
    }
  }
  return true;
}

void verify_clamp(const Site& site) {
  const Shape& x = site.operand_shape(1);
  for (size_t i : {size_t{0}, size_t{2}}) {
    const Shape& bound = site.operand_shape(i);
    if ((bound.rank() != 0 && bound.dims != x.dims) || !same_element_type(bound.type, x.type)) {
      site.error(fmt::format("clamp bound {} ({}) must be a {}[] scalar or have the shape of the operand {}", i,
                             str(bound), primitive_type_name(x.type), str(x)));
      return;
    }
  }
  expect_shape(site, x);
}

// Result dims must match; the element type may differ only in float precision.
void expect_elementwise_result(const Site& site, const Shape& expected) {
  const Shape& got = site.inst.shape;
  if (got.is_array() && got.dims == expected.dims && same_element_type(got.type, expected.type)) return;
  expect_shape(site, expected);
}

}  // namespace

void verify_elementwise(const Site& site) {
  const Opcode op = site.inst.opcode;
  const std::string name = written_opcode(site.inst);
  if (!expect_operand_count(site, arity(op))) return;
  for (size_t i = 0; i < site.operand_count(); ++i) {
    if (!expect_array_operand(site, i)) return;
  }
  if (op == Opcode::kClamp) {
    verify_clamp(site);
    return;
  }
  // The operands that carry the data: all of them, except select's predicate.
  const size_t first = op == Opcode::kSelect ? 1 : 0;
  const Shape& data = site.operand_shape(first);
  std::vector<int64_t> dims = data.dims;
  for (size_t i = first + 1; i < site.operand_count(); ++i) {
    const Shape& other = site.operand_shape(i);
    const bool shifts = op == Opcode::kShiftLeft || op == Opcode::kShiftRightArithmetic ||
                        op == Opcode::kShiftRightLogical;
    const bool types_ok = shifts ? is_integral(other.type) : same_element_type(other.type, data.type);
    std::vector<int64_t> joined;
    const bool dims_ok = op == Opcode::kSelect ? other.dims == data.dims : broadcast_dims(data, other, joined);
    if (!types_ok || !dims_ok) {
      site.error(fmt::format("{} operands must have the same shape, but operand {} ({}) is {} and operand {} ({}) is {}",
                             name, first, ref(*site.operands[first]), str(data), i, ref(*site.operands[i]),
                             str(other)));
      return;
    }
    if (op != Opcode::kSelect) dims = joined;
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
  if (op == Opcode::kCompare && !site.inst.comparison_direction) {
    site.error("compare needs direction=EQ|NE|LT|LE|GT|GE");
  }
  expect_elementwise_result(site, Shape::array(result_type(op, data.type), dims));
}

}  // namespace sl::hlo::verify_detail
