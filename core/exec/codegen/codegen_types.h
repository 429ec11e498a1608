#pragma once
// How generated kernels hold HLO element types: a compute type (float for
// f16/bf16/f32, double for f64, a 32- or 64-bit integer, bool for pred) in
// registers, a storage type in memory, and rounding back to the element type
// after every op, as the cpu backend does. Pure C++: no CUDA dependency.

#include <string>

#include "core/common/status.h"
#include "core/hlo/shape.h"

namespace sl::exec::codegen {

struct TypeNames {
  std::string compute;  // "float"
  std::string storage;  // "unsigned short" for bf16
};

// Unsupported element types (f8, complex, sub-byte ints) are an error naming the type.
Result<TypeNames> type_names(hlo::PrimitiveType type);

// `element` (a storage value) as the compute type.
std::string load_value(hlo::PrimitiveType type, const std::string& element);
// A compute value as the storage type.
std::string store_value(hlo::PrimitiveType type, const std::string& value);
// A compute-typed expression rounded (or wrapped) to the element type.
std::string round_to(hlo::PrimitiveType type, const std::string& value);
// A constant of the type, already in compute form.
std::string literal_value(hlo::PrimitiveType type, double v);
// convert: `value` of type `from` (compute form) as `to` (compute form),
// float -> int saturating with NaN -> 0, like the cpu backend.
std::string convert_value(hlo::PrimitiveType from, hlo::PrimitiveType to, const std::string& value);

// Device helpers every generated source starts with (bf16/f16 conversions
// through PTX, NaN-propagating max/min, XLA's integer division rules).
extern const char* const kPrelude;

}  // namespace sl::exec::codegen
