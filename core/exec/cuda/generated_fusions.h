#pragma once
// kLoop and kInput fusions as one generated kernel each (core/exec/codegen),
// compiled with NVRTC when the run is set up (cached on disk) and loaded as
// a CUDA library, which every device of the process can launch from. A
// fusion the generator refuses keeps its reason; issuing it fails with that
// reason (the cuda backend has no op-by-op path for fusions), and the
// run's trace counts both kinds (codegen_* counters).

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/exec/codegen/fusion_codegen.h"
#include "core/sched/lowering.h"
#include "core/trace/trace.h"

namespace sl::exec::cuda {

struct DeviceContext;

struct CodegenStats {
  int64_t generated = 0;     // fusions with a kernel
  int64_t fallback = 0;      // kLoop/kInput fusions the generator refused
  int64_t not_generated = 0; // other fusion kinds (kCustom ...)
  int64_t cache_hits = 0;
  double cold_ms = 0;        // NVRTC time of kernels not in the cache
  double cached_ms = 0;      // reading cached kernels
  double load_ms = 0;        // cudaLibraryLoadData
};

class GeneratedFusions {
 public:
  ~GeneratedFusions();
  // Every fusion instruction the program's thunks run, generated, compiled
  // for `arch` ("sm_90") with the cache in `cache_dir` (empty: none) and
  // loaded. A compile or load failure is an error (a generator bug).
  static Result<std::unique_ptr<GeneratedFusions>> build(const sched::LoweredProgram& program, const std::string& arch,
                                                         const std::string& cache_dir);
  // Launches the fusion thunk's kernel on its stream, or returns the
  // generator's reason why there is none.
  Status launch(const sched::Thunk& thunk, DeviceContext& ctx) const;
  const CodegenStats& stats() const { return stats_; }
  void add_counters(trace::Trace* trace) const;

 private:
  struct Kernel {
    codegen::GeneratedKernel generated;
    cudaLibrary_t library = nullptr;
    cudaKernel_t kernel = nullptr;
  };
  std::map<const hlo::Instruction*, Kernel> kernels_;
  std::map<const hlo::Instruction*, std::string> refused_;  // fusion -> why
  CodegenStats stats_;
  int sm_count_ = 132;
};

}  // namespace sl::exec::cuda
