#include "core/hlo/shape.h"

#include <array>
#include <utility>

namespace sl::hlo {
namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int64_t bytes;  // as XLA sizes an unpacked element
  int bits;
};

// In enum order; `info` indexes it.
constexpr std::array<TypeInfo, 35> kTypes = {{
    {PrimitiveType::kPred, "pred", 1, 8},
    {PrimitiveType::kS8, "s8", 1, 8},
    {PrimitiveType::kS32, "s32", 4, 32},
    {PrimitiveType::kU32, "u32", 4, 32},
    {PrimitiveType::kS64, "s64", 8, 64},
    {PrimitiveType::kF16, "f16", 2, 16},
    {PrimitiveType::kBF16, "bf16", 2, 16},
    {PrimitiveType::kF32, "f32", 4, 32},
    {PrimitiveType::kF64, "f64", 8, 64},
    {PrimitiveType::kS1, "s1", 1, 1},
    {PrimitiveType::kS2, "s2", 1, 2},
    {PrimitiveType::kS4, "s4", 1, 4},
    {PrimitiveType::kS16, "s16", 2, 16},
    {PrimitiveType::kU1, "u1", 1, 1},
    {PrimitiveType::kU2, "u2", 1, 2},
    {PrimitiveType::kU4, "u4", 1, 4},
    {PrimitiveType::kU8, "u8", 1, 8},
    {PrimitiveType::kU16, "u16", 2, 16},
    {PrimitiveType::kU64, "u64", 8, 64},
    {PrimitiveType::kF8E5M2, "f8e5m2", 1, 8},
    {PrimitiveType::kF8E4M3, "f8e4m3", 1, 8},
    {PrimitiveType::kF8E4M3FN, "f8e4m3fn", 1, 8},
    {PrimitiveType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 1, 8},
    {PrimitiveType::kF8E5M2FNUZ, "f8e5m2fnuz", 1, 8},
    {PrimitiveType::kF8E4M3FNUZ, "f8e4m3fnuz", 1, 8},
    {PrimitiveType::kF8E3M4, "f8e3m4", 1, 8},
    {PrimitiveType::kF8E8M0FNU, "f8e8m0fnu", 1, 8},
    {PrimitiveType::kF6E2M3FN, "f6e2m3fn", 1, 6},
    {PrimitiveType::kF6E3M2FN, "f6e3m2fn", 1, 6},
    {PrimitiveType::kF4E2M1FN, "f4e2m1fn", 1, 4},
    {PrimitiveType::kC64, "c64", 8, 64},
    {PrimitiveType::kC128, "c128", 16, 128},
    {PrimitiveType::kOpaque, "opaque", 8, 64},
    {PrimitiveType::kToken, "token", 0, 0},
    {PrimitiveType::kTuple, "(tuple)", 0, 0},
}};

constexpr bool types_in_enum_order() {
  for (size_t i = 0; i < kTypes.size(); ++i) {
    if (static_cast<size_t>(kTypes[i].type) != i) return false;
  }
  return true;
}
static_assert(types_in_enum_order(), "kTypes must list PrimitiveType in enum order");

const TypeInfo& info(PrimitiveType type) { return kTypes[static_cast<size_t>(type)]; }

}  // namespace

std::string_view primitive_type_name(PrimitiveType type) { return info(type).name; }
int64_t primitive_type_bytes(PrimitiveType type) { return info(type).bytes; }
int primitive_type_bits(PrimitiveType type) { return info(type).bits; }

std::optional<PrimitiveType> parse_primitive_type(std::string_view name) {
  for (const TypeInfo& t : kTypes) {
    if (t.name == name && t.type != PrimitiveType::kTuple) return t.type;
  }
  return std::nullopt;
}

bool is_floating(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16: case PrimitiveType::kBF16: case PrimitiveType::kF32: case PrimitiveType::kF64:
    case PrimitiveType::kF8E5M2: case PrimitiveType::kF8E4M3: case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ: case PrimitiveType::kF8E5M2FNUZ: case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF8E3M4: case PrimitiveType::kF8E8M0FNU: case PrimitiveType::kF6E2M3FN:
    case PrimitiveType::kF6E3M2FN: case PrimitiveType::kF4E2M1FN:
      return true;
    default:
      return false;
  }
}
bool is_complex(PrimitiveType type) { return type == PrimitiveType::kC64 || type == PrimitiveType::kC128; }
bool is_signed_integral(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kS1: case PrimitiveType::kS2: case PrimitiveType::kS4: case PrimitiveType::kS8:
    case PrimitiveType::kS16: case PrimitiveType::kS32: case PrimitiveType::kS64:
      return true;
    default:
      return false;
  }
}
bool is_integral(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kU1: case PrimitiveType::kU2: case PrimitiveType::kU4: case PrimitiveType::kU8:
    case PrimitiveType::kU16: case PrimitiveType::kU32: case PrimitiveType::kU64:
      return true;
    default:
      return is_signed_integral(type);
  }
}

Shape Shape::array(PrimitiveType type, std::vector<int64_t> dims) {
  Shape s;
  s.type = type;
  s.dims = std::move(dims);
  return s;
}
Shape Shape::tuple(std::vector<Shape> elements) {
  Shape s;
  s.type = PrimitiveType::kTuple;
  s.elements = std::move(elements);
  return s;
}
Shape Shape::token() {
  Shape s;
  s.type = PrimitiveType::kToken;
  return s;
}

int64_t Shape::element_count() const {
  if (!is_array()) return 0;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t Shape::byte_size() const {
  if (is_tuple()) {
    int64_t total = 0;
    for (const Shape& e : elements) total += e.byte_size();
    return total;
  }
  return element_count() * primitive_type_bytes(type);
}

std::vector<const Shape*> Shape::leaves() const {
  std::vector<const Shape*> out;
  if (!is_tuple()) {
    out.push_back(this);
    return out;
  }
  for (const Shape& e : elements) {
    for (const Shape* leaf : e.leaves()) out.push_back(leaf);
  }
  return out;
}

bool Shape::is_row_major() const {
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    if (minor_to_major[i] != static_cast<int64_t>(minor_to_major.size() - 1 - i)) return false;
  }
  return true;
}

bool Shape::operator==(const Shape& other) const {
  return type == other.type && dims == other.dims && elements == other.elements;
}

namespace {

std::string shape_text(const Shape& shape, bool layouts) {
  if (shape.is_tuple()) {
    std::string out = "(";
    for (size_t i = 0; i < shape.elements.size(); ++i) {
      if (i) out += ", ";
      out += shape_text(shape.elements[i], layouts);
    }
    return out + ")";
  }
  std::string out(primitive_type_name(shape.type));
  out += "[";
  for (size_t i = 0; i < shape.dims.size(); ++i) {
    if (i) out += ",";
    const int8_t dynamic = i < shape.dynamic_dims.size() ? shape.dynamic_dims[i] : 0;
    if (dynamic == 2) {
      out += "?";
      continue;
    }
    if (dynamic == 1) out += "<=";
    out += std::to_string(shape.dims[i]);
  }
  out += "]";
  if (layouts) out += shape.layout;
  return out;
}

}  // namespace

std::string to_string(const Shape& shape) { return shape_text(shape, false); }

std::string to_string_with_layout(const Shape& shape) { return shape_text(shape, true); }

}  // namespace sl::hlo
