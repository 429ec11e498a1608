#pragma once
// Bit-level views of element values for the CPU ops: the two's-complement
// pattern of an integer, the encoding of a float in its storage format, and
// back. Values are held as doubles (see literal.h); integers are exact up to
// 2^53 in magnitude.

#include <cstdint>

#include "core/common/status.h"
#include "core/exec/literal.h"
#include "core/hlo/shape.h"

namespace sl::exec::cpu {

// Low `bits` bits set (all 64 for bits >= 64).
inline uint64_t low_mask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

// The value's bit pattern in the storage format of `type` (integers, pred
// and every float kind), in the low primitive_type_bits(type) bits.
uint64_t encode_bits(double value, hlo::PrimitiveType type);
// The value whose storage pattern in `type` is `bits` (higher bits ignored).
double decode_bits(uint64_t bits, hlo::PrimitiveType type);

// An integer element as 64-bit two's complement (wrapping values of any
// integer type); decode_bits turns a pattern back into a value.
uint64_t integer_bits(double value);

// bitcast-convert: same width elementwise; a wider operand type splits into a
// new minor dimension (least significant part first), a narrower one joins
// its minor dimension.
Result<Literal> eval_bitcast_convert(const hlo::Shape& shape, const Literal& operand);

}  // namespace sl::exec::cpu
