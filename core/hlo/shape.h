#pragma once
// HLO shapes: arrays of a primitive type, token[], and nested tuples.
// Layouts: the minor-to-major order is kept (`minor_to_major`; tiles and
// memory spaces are parsed and dropped). Values are always held in logical
// row-major order; the layout matters only where XLA reinterprets a buffer
// (bitcast). Dynamic dimensions keep their bound as the size.
// The primitive types are those of XLA's xla_data.proto.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sl::hlo {

// The first nine keep their numbers: the CUDA kernels use them as type codes
// (core/exec/cuda/fast_paths.h).
enum class PrimitiveType {
  kPred, kS8, kS32, kU32, kS64, kF16, kBF16, kF32, kF64,
  kS1, kS2, kS4, kS16, kU1, kU2, kU4, kU8, kU16, kU64,
  kF8E5M2, kF8E4M3, kF8E4M3FN, kF8E4M3B11FNUZ, kF8E5M2FNUZ, kF8E4M3FNUZ, kF8E3M4, kF8E8M0FNU,
  kF6E2M3FN, kF6E3M2FN, kF4E2M1FN,
  kC64, kC128, kOpaque,
  kToken, kTuple,
};

std::string_view primitive_type_name(PrimitiveType type);            // "bf16", "(tuple)"...
std::optional<PrimitiveType> parse_primitive_type(std::string_view name);
int64_t primitive_type_bytes(PrimitiveType type);                    // 0 for token/tuple; sub-byte types 1
int primitive_type_bits(PrimitiveType type);                          // s4 -> 4, c64 -> 64, pred -> 8
bool is_floating(PrimitiveType type);                                 // real floats incl. f8/f6/f4
bool is_complex(PrimitiveType type);                                  // c64, c128
bool is_integral(PrimitiveType type);                                 // pred excluded
bool is_signed_integral(PrimitiveType type);

struct Shape {
  PrimitiveType type = PrimitiveType::kTuple;
  std::vector<int64_t> dims;     // arrays only
  std::vector<Shape> elements;   // tuples only
  // Per dimension: 0 static, 1 bounded dynamic (`<=N`, size N), 2 unbounded
  // (`?`, size 0). Empty when every dimension is static (the usual case).
  // Not part of operator== (XLA's "compatible" shapes ignore it too).
  std::vector<int8_t> dynamic_dims;
  // The layout's minor-to-major dimension order as written (`{0,1}`); empty
  // when none was written or the rank is below 2 (row-major). Not part of
  // operator== (XLA compares shapes without layouts here too).
  std::vector<int64_t> minor_to_major;
  // The layout exactly as written, tiles and memory space included
  // (`{1,0:T(8,128)S(1)}`); empty when none was. The printer writes it back.
  std::string layout;
  // True when the layout is row-major: none written, or {rank-1, ..., 0}.
  bool is_row_major() const;

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
// The same with each array's layout as the module wrote it, as XLA prints
// shapes: "f32[4,2]{0,1}", "(bf16[8]{0}, s32[])".
std::string to_string_with_layout(const Shape& shape);

}  // namespace sl::hlo
