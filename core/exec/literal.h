#pragma once
// A host-side array value: shape plus row-major values as doubles (exact for
// every supported type except s64 beyond 2^53).

#include <cstdint>
#include <vector>

#include "core/hlo/shape.h"

namespace sl::exec {

struct Literal {
  hlo::Shape shape;          // an array shape
  std::vector<double> values;
};

// docs/program-format.md, `--init ramp`: element i of parameter p on device g is
// ((g*7 + p*3 + i) mod 11) - 5 converted to the type (pred: odd -> true).
Literal ramp_literal(const hlo::Shape& shape, int64_t device, int64_t parameter);
// `--init random --seed S`: uniform in [-1, 1), deterministic per (seed, device, parameter).
Literal random_literal(const hlo::Shape& shape, uint64_t seed, int64_t device, int64_t parameter);
// The random stream behind random_literal, exposed so a device can fill
// element i on its own: draw i (from 0) is splitmix64_mix(start + (i + 1) *
// kSplitmix64Gamma), and the value keeps its top random_fraction_bits(type)
// bits as u in [0, 1): 2u - 1 (floats), floor(2u - 1) (integers), u < 0.5 (pred).
inline constexpr uint64_t kSplitmix64Gamma = 0x9E3779B97F4A7C15ull;
uint64_t random_stream_start(uint64_t seed, int64_t device, int64_t parameter);
int random_fraction_bits(hlo::PrimitiveType type);
// Rounds v to what `type` can hold (bf16/f16 rounding, integer wrap, pred).
double round_to_type(double v, hlo::PrimitiveType type);

}  // namespace sl::exec
