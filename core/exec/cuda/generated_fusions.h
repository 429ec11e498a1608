#pragma once
// Fusions as planned by core/exec/codegen/fusion_plan.h: generated kernels
// (compiled with NVRTC when the run is set up, cached on disk, loaded as a
// CUDA library every device of the process can launch from), Triton GEMM
// fusions as cuBLASLt GEMMs between generated prologue/epilogue kernels,
// and op by op through the per-op kernels where nothing is generated. The
// run's trace counts each path (codegen_* counters) and names op-by-op
// fusions' kernels "NAME [op-by-op]"; a fusion nothing runs fails the run
// when issued, naming why.

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/exec/codegen/fusion_plan.h"
#include "core/sched/lowering.h"
#include "core/trace/trace.h"

namespace sl::exec::cuda {

struct DeviceContext;

struct CodegenStats {
  int64_t generated = 0;      // fusions run as generated kernels
  int64_t gemm = 0;           // Triton GEMM fusions run as cuBLASLt + generated kernels
  int64_t op_by_op = 0;       // fusions with no generated kernel, run op by op
  int64_t none = 0;           // fusions nothing runs (issuing one fails, naming why)
  int64_t hoisted = 0;        // reduces hoisted out of a loop into a kernel of their own
  int64_t kernels = 0;        // generated kernels compiled
  int64_t cache_hits = 0;
  int64_t scratch_bytes = 0;  // temporaries of all fusions, per device
  double cold_ms = 0;         // NVRTC time of kernels not in the cache
  double cached_ms = 0;       // reading cached kernels
  double load_ms = 0;         // cudaLibraryLoadData
};

class GeneratedFusions {
 public:
  ~GeneratedFusions();
  // Every fusion instruction the program's thunks run, planned
  // (codegen/fusion_plan.h), its kernels compiled for `arch` ("sm_90") with
  // the cache in `cache_dir` (empty: none) and loaded. A compile or load
  // failure is an error (a generator bug).
  static Result<std::unique_ptr<GeneratedFusions>> build(const sched::LoweredProgram& program, const std::string& arch,
                                                         const std::string& cache_dir);
  // The device's temporaries (ctx.scratch) and the op-by-op runs' constants in them.
  Status attach(DeviceContext& ctx) const;
  // Runs the fusion thunk on its stream as planned, or returns why nothing can.
  Status launch(const sched::Thunk& thunk, DeviceContext& ctx) const;
  // The name a fusion's kernels carry in the trace when it is not the
  // instruction's own ("fusion.3 [op-by-op]"), else null.
  const std::string* trace_name(const hlo::Instruction* fusion) const;
  // Whether running `fusion` uses device state that other thunks share or
  // its own earlier runs left: the fallback GEMM workspace (a cuBLASLt step,
  // op by op) or its temporaries in the scratch. Such fusions must not run
  // beside each other in a CUDA graph (graph_edges.h).
  bool uses_shared_state(const hlo::Instruction* fusion) const;
  const CodegenStats& stats() const { return stats_; }
  void add_counters(trace::Trace* trace) const;

 private:
  struct Kernel {
    codegen::GeneratedKernel generated;
    cudaLibrary_t library = nullptr;
    cudaKernel_t kernel = nullptr;
  };
  struct Entry {
    codegen::FusionPlan plan;
    const hlo::Computation* computation = nullptr;
    size_t outputs = 0;                 // of the fused computation
    std::vector<Kernel> kernels;        // per step (empty for a GEMM step)
    std::vector<int64_t> temp_offsets;  // in the device's scratch
    std::string trace_name;
  };
  Status launch_steps(const Entry& e, const sched::Thunk& t, DeviceContext& ctx) const;
  Status launch_op_by_op(const Entry& e, const sched::Thunk& t, DeviceContext& ctx) const;

  std::map<const hlo::Instruction*, Entry> entries_;
  std::vector<cudaLibrary_t> libraries_;
  CodegenStats stats_;
  int sm_count_ = 132;
};

}  // namespace sl::exec::cuda
