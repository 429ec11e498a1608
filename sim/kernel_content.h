#pragma once
// What a kernel thunk does, read from its instruction (docs/program-format.md,
// "Simulator cost by content"): a fusion that holds a dot is a GEMM with
// that dot's dimensions; other work counts the flops and transcendental
// operations of the instructions inside and the bytes it actually moves
// (a broadcast operand is read once, a parameter used only through a slice
// reads the slice, a dynamic-update-slice in place writes only its update).

#include <cstdint>

#include "core/hlo/module.h"
#include "core/sched/thunk.h"

namespace sl::sim {

enum class WorkClass {
  kThunk,         // nothing to add to the thunk's own flops and bytes
  kGemm,          // a fusion (Triton GEMM) holding a dot
  kConvolution,   // an implicit GEMM over the convolution's window
  kFusion,        // loop / input (reduction) fusion: its instructions' work
  kReduction,     // reduce, reduce-window
  kElementwise,   // a transcendental elementwise op outside a fusion
  kGather,
  kScatter,
  kSort,
  kCustomCall,    // opaque custom-call (not cuBLAS): its operand and result bytes only
};

const char* work_class_name(WorkClass c);

struct KernelWork {
  WorkClass work_class = WorkClass::kThunk;
  sched::GemmDims gemm;       // kGemm, kConvolution: the largest dot (or the implicit GEMM)
  double flops = 0;           // every dot's 2mnk plus elementwise and reduction ops
  double transcendentals = 0; // exp, log, rsqrt, tanh, erf, ... (the SFU's work)
  double bytes_read = 0;      // from HBM
  double bytes_written = 0;
  double bytes() const { return bytes_read + bytes_written; }
};

// The work of `thunk` (a kKernel thunk). `module` resolves the computations
// a fusion calls; without it a fusion is kThunk. kThunk work carries the
// thunk's own flops and bytes_accessed.
KernelWork kernel_work(const hlo::Module* module, const sched::Thunk& thunk);

// The work of `instruction` living in `computation`, as kernel_work sees it.
KernelWork instruction_work(const hlo::Module* module, const hlo::Computation& computation,
                            const hlo::Instruction& instruction);

}  // namespace sl::sim
