#pragma once
// HLO shapes: arrays of a primitive type, token[], and nested tuples.
// Layouts ({1,0}) are parsed and dropped: every array is row-major here.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sl::hlo {

enum class PrimitiveType { kPred, kS8, kS32, kU32, kS64, kF16, kBF16, kF32, kF64, kToken, kTuple };

std::string_view primitive_type_name(PrimitiveType type);            // "bf16", "(tuple)"...
std::optional<PrimitiveType> parse_primitive_type(std::string_view name);
int64_t primitive_type_bytes(PrimitiveType type);                    // 0 for token/tuple
bool is_floating(PrimitiveType type);
bool is_integral(PrimitiveType type);                                 // pred excluded
bool is_signed_integral(PrimitiveType type);

struct Shape {
  PrimitiveType type = PrimitiveType::kTuple;
  std::vector<int64_t> dims;     // arrays only
  std::vector<Shape> elements;   // tuples only

  static Shape array(PrimitiveType type, std::vector<int64_t> dims);
  static Shape tuple(std::vector<Shape> elements);
  static Shape token();

  bool is_tuple() const { return type == PrimitiveType::kTuple; }
  bool is_token() const { return type == PrimitiveType::kToken; }
  bool is_array() const { return !is_tuple() && !is_token(); }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t element_count() const;   // product of dims; 1 for scalars; 0 for tuple/token
  int64_t byte_size() const;       // arrays: elements * type bytes; tuples: sum of leaves

  // Leaves of a (nested) tuple in order; an array is its own only leaf.
  std::vector<const Shape*> leaves() const;

  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }
};

// "f32[4,2]", "(bf16[8], s32[])", "token[]". Parses back with the parser.
std::string to_string(const Shape& shape);

}  // namespace sl::hlo
