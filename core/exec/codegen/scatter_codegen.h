#pragma once
// The kernel of a scatter at the root of a fusion: one thread per update
// element, which reads its start indices and its update (both computed
// elementwise from the fusion's parameters), skips a window that does not
// fit as XLA does, and combines into the output in place: an atomic add
// (compare-and-swap for bf16/f16) or a store for an assigning to_apply.
// Updates land in another order than the cpu backend's (within the GPU
// tests' tolerances for add; colliding assignments are as undefined as in
// XLA). The output must hold the scatter's operand before it runs.

#include <string>

#include "core/common/status.h"
#include "core/exec/codegen/fusion_codegen.h"

namespace sl::exec::codegen {

// `k` is the scatter instruction of `computation`; the kernel takes the
// computation's parameters, then the output.
Result<GeneratedKernel> generate_scatter_kernel(const hlo::Module& module, const hlo::Computation& computation, int k,
                                                const std::string& name);

}  // namespace sl::exec::codegen
