#pragma once
// XLA's choice of TF32 for an f32 GEMM on NVIDIA GPUs (matmul_utils,
// IsTf32Allowed and GetBlasComputationType): with the dot's algorithm unset,
// TF32 whenever no operand asks for HIGHEST precision (DEFAULT and HIGH
// allow it, TF32 being enabled by default); with an algorithm, TF32 exactly
// when the algorithm's inputs are TF32. XLA runs f32 dots of JAX programs
// (DEFAULT precision) on tensor cores this way.

#include "core/hlo/module.h"

namespace sl::sched {

// `gemm`: a dot (operand_precision= / algorithm= attributes) or a cuBLAS
// custom-call (backend_config gemm_backend_config.precision_config).
// Absent settings are XLA's defaults. Only meaningful for f32 operands.
bool xla_allows_tf32(const hlo::Instruction& gemm);

}  // namespace sl::sched
