#pragma once
// CUDA C++ source of one kernel for a kLoop or kInput fusion (docs/codegen.md):
// every instruction of the fused computation becomes an inlined function of
// its output's row-major linear index (XLA's elemental emitter does the
// same); each fusion output gets one loop in the kernel: one thread per
// element, a warp per row for a reduction over the minor dimensions, a
// 32x8-thread tile per 32 outputs for a reduction over major dimensions
// (XLA's row and column reductions), a 32x32 tile a block for a transpose
// of the two minor dimensions. Pure C++; NVRTC compiles the result.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/exec/codegen/row_local.h"
#include "core/hlo/module.h"

namespace sl::exec::codegen {

inline constexpr int kBlockThreads = 256;

// kRowElementwise: an element loop run a warp per row, the warp computing
// the reduces of its row first (row_local.h). kTransposeTile: a transpose of
// the two minor dimensions through 32x32 tiles in shared memory.
enum class LoopKind { kElementwise, kRowReduce, kColumnReduce, kRowElementwise, kTransposeTile };

struct KernelOutput {
  LoopKind loop = LoopKind::kElementwise;
  int64_t elements = 0;  // of the output
  int64_t threads = 0;   // the loop wants this many threads for one pass
};

struct GeneratedKernel {
  std::string name;    // the extern "C" entry point
  std::string source;  // compiles on its own (no includes)
  int inputs = 0;      // kernel parameters: the fusion's operands in order, then
  int loaded = 0;      // the buffers of KernelRequest::loaded in order, then
  int outputs = 0;     // its result leaves in order, each a device pointer
  std::vector<KernelOutput> loops;
  // Blocks of kBlockThreads to launch: enough for the widest loop, capped
  // (the loops are grid-stride).
  int64_t blocks(int sm_count) const;
};

// Fusions this generator is for.
bool generates_kind(const std::string& fusion_kind);

// The kernel of `fusion` (a kFusion instruction of `module`), or an error
// naming the first instruction and opcode it cannot generate: the caller
// runs that fusion another way.
Result<GeneratedKernel> generate_fusion_kernel(const hlo::Module& module, const hlo::Instruction& fusion);

// One kernel over a fused computation: which instructions it stores (in
// order: its output pointers) and which it reads from buffers instead of
// computing (a reduce hoisted into a kernel of its own, a GEMM's result).
// Parameters and outputs are read and written in their layouts' memory
// order (physical_index); temporaries (`loaded`, and the outputs when
// `outputs_are_temporaries`) in row-major order.
struct KernelRequest {
  std::string name;
  std::string comment;
  std::vector<int> outputs;
  std::vector<int> loaded;
  bool outputs_are_temporaries = false;
};
Result<GeneratedKernel> generate_kernel(const hlo::Module& module, const hlo::Computation& computation,
                                        const KernelRequest& request);

// The fused computation's outputs: the root, or the operands of a tuple root.
std::vector<int> fusion_outputs(const hlo::Computation& computation);

// The reduce output `k` is, or reads at its own index (through bitcasts,
// converts, elementwise ops), when the output's loop can be that reduce's
// row or column loop; `loaded` instructions are buffers, never drivers.
std::optional<int> loop_driver(const hlo::Computation& computation, int k, const std::vector<int>& loaded);

// The reduces the kernel of `outputs` computes a warp per row (row_local.h):
// its loops as generate_kernel runs them, outputs stored row-major when
// `outputs_are_temporaries` or their layouts are.
RowLocalPlan row_local_plan(const hlo::Computation& computation, const std::vector<int>& outputs,
                            const std::vector<int>& loaded, bool outputs_are_temporaries);

// A C identifier made of `name` ("fused_computation.14" -> "fused_computation_14").
std::string identifier(const std::string& name);

}  // namespace sl::exec::codegen
