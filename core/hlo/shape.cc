#include "core/hlo/shape.h"

#include <array>
#include <utility>

namespace sl::hlo {
namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int64_t bytes;
};

constexpr std::array<TypeInfo, 11> kTypes = {{
    {PrimitiveType::kPred, "pred", 1},
    {PrimitiveType::kS8, "s8", 1},
    {PrimitiveType::kS32, "s32", 4},
    {PrimitiveType::kU32, "u32", 4},
    {PrimitiveType::kS64, "s64", 8},
    {PrimitiveType::kF16, "f16", 2},
    {PrimitiveType::kBF16, "bf16", 2},
    {PrimitiveType::kF32, "f32", 4},
    {PrimitiveType::kF64, "f64", 8},
    {PrimitiveType::kToken, "token", 0},
    {PrimitiveType::kTuple, "(tuple)", 0},
}};

const TypeInfo& info(PrimitiveType type) { return kTypes[static_cast<size_t>(type)]; }

}  // namespace

std::string_view primitive_type_name(PrimitiveType type) { return info(type).name; }
int64_t primitive_type_bytes(PrimitiveType type) { return info(type).bytes; }

std::optional<PrimitiveType> parse_primitive_type(std::string_view name) {
  for (const TypeInfo& t : kTypes) {
    if (t.name == name && t.type != PrimitiveType::kTuple) return t.type;
  }
  return std::nullopt;
}

bool is_floating(PrimitiveType type) {
  return type == PrimitiveType::kF16 || type == PrimitiveType::kBF16 || type == PrimitiveType::kF32 ||
         type == PrimitiveType::kF64;
}
bool is_integral(PrimitiveType type) {
  return type == PrimitiveType::kS8 || type == PrimitiveType::kS32 || type == PrimitiveType::kU32 ||
         type == PrimitiveType::kS64;
}
bool is_signed_integral(PrimitiveType type) {
  return type == PrimitiveType::kS8 || type == PrimitiveType::kS32 || type == PrimitiveType::kS64;
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

bool Shape::operator==(const Shape& other) const {
  return type == other.type && dims == other.dims && elements == other.elements;
}

std::string to_string(const Shape& shape) {
  if (shape.is_tuple()) {
    std::string out = "(";
    for (size_t i = 0; i < shape.elements.size(); ++i) {
      if (i) out += ", ";
      out += to_string(shape.elements[i]);
    }
    return out + ")";
  }
  std::string out(primitive_type_name(shape.type));
  out += "[";
  for (size_t i = 0; i < shape.dims.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(shape.dims[i]);
  }
  return out + "]";
}

}  // namespace sl::hlo
