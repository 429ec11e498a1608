#pragma once
// GEMM recognition and dimensions (docs/program-format.md): `dot`, and custom-calls
// to cuBLAS (`__cublas$gemm`, `__cublas$lt$matmul`), whose dot dimension
// numbers live in backend_config.

#include <cstdint>

#include "core/hlo/module.h"
#include "core/sched/thunk.h"

namespace sl::sched {

// Workspace given to a dot's GEMM: cuBLASLt's recommended 32 MiB for Hopper.
// A cuBLAS custom-call brings its own workspace as its last s8[...] output.
constexpr int64_t kDefaultGemmWorkspaceBytes = int64_t{32} << 20;

// dot, or a custom-call (plain or sugared `custom-call-start`) to cuBLAS.
bool is_gemm(const hlo::Instruction& instruction);

// The cuBLAS call a custom fusion runs, or null: XLA runs such a fusion as
// that one call (its dynamic-slice fusions run one on a slice of an operand).
const hlo::Instruction* library_call_in_fusion(const hlo::Module& module, const hlo::Instruction& fusion);

// m, n, k, batch and element type of a GEMM whose operands live in
// `computation`. For a custom-call the dims come from backend_config
// (dot_dimension_numbers, at top level or in gemm_backend_config); without
// them a [batch..., m, k] x [batch..., k, n] layout is assumed.
GemmDims gemm_dims(const hlo::Computation& computation, const hlo::Instruction& gemm);

// Index of the workspace leaf in `result` (the custom-call's result shape; for
// a sugared custom-call-start, its done's shape): the last tuple element when
// that is an s8 array, or -1 when there is none (dot: never).
int gemm_workspace_leaf(const hlo::Instruction& gemm, const hlo::Shape& result);

// Whether `gte`, an instruction of `computation`, takes a cuBLAS call's
// workspace out of the call's result tuple.
bool takes_gemm_workspace(const hlo::Computation& computation, const hlo::Instruction& gte);

// Index of the leaf in the result of a library-calling fusion (`body`: its
// fused computation) that is its cuBLAS call's workspace, or -1: the call's
// own when it is the root, or a root tuple element taking it (a dynamic-slice
// fusion returns it beside the updated operand). Scratch, like a
// custom-call's: not output.
int fusion_workspace_leaf(const hlo::Computation& body);

}  // namespace sl::sched
