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

// DESIGN section 4 `--init ramp`: element i of parameter p on device g is
// ((g*7 + p*3 + i) mod 11) - 5 converted to the type (pred: odd -> true).
Literal ramp_literal(const hlo::Shape& shape, int64_t device, int64_t parameter);
// `--init random --seed S`: uniform in [-1, 1), deterministic per (seed, device, parameter).
Literal random_literal(const hlo::Shape& shape, uint64_t seed, int64_t device, int64_t parameter);
// Rounds v to what `type` can hold (bf16/f16 rounding, integer wrap, pred).
double round_to_type(double v, hlo::PrimitiveType type);

}  // namespace sl::exec
