#pragma once
// Literal <-> device bytes for every array type (row-major, XLA widths:
// pred is one byte). Host only.

#include <cstdint>
#include <vector>

#include "core/exec/literal.h"

namespace sl::exec::cuda {

std::vector<uint8_t> encode_literal(const Literal& literal);
// `bytes` holds shape.element_count() elements of shape.type.
Literal decode_literal(const hlo::Shape& shape, const uint8_t* bytes);

}  // namespace sl::exec::cuda
