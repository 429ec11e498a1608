// Generated fusion kernels: build, load, launch (generated_fusions.h).

#include "core/exec/cuda/generated_fusions.h"

#include <fmt/format.h>

#include <chrono>

#include "core/exec/cuda/cuda_backend_impl.h"
#include "core/exec/cuda/cuda_check.h"
#include "core/exec/cuda/device_context.h"
#include "core/exec/nvrtc/nvrtc_compiler.h"

namespace sl::exec::cuda {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

GeneratedFusions::~GeneratedFusions() {
  for (auto& [inst, k] : kernels_) {
    if (k.library) cudaLibraryUnload(k.library);
  }
}

Result<std::unique_ptr<GeneratedFusions>> GeneratedFusions::build(const sched::LoweredProgram& program,
                                                                  const std::string& arch,
                                                                  const std::string& cache_dir) {
  auto out = std::unique_ptr<GeneratedFusions>(new GeneratedFusions());
  int device = 0;
  if (cudaGetDevice(&device) == cudaSuccess) {
    cudaDeviceGetAttribute(&out->sm_count_, cudaDevAttrMultiProcessorCount, device);
  }
  for (const sched::DeviceProgram& dp : program.devices) {
    for (const sched::Thunk& t : dp.thunks) {
      const hlo::Instruction* inst = t.instruction;
      if (inst == nullptr || inst->opcode != hlo::Opcode::kFusion) continue;
      if (out->kernels_.count(inst) || out->refused_.count(inst)) continue;
      if (!codegen::generates_kind(inst->fusion_kind)) {
        out->refused_[inst] = fmt::format("fusion kind {} has no generated kernel", inst->fusion_kind);
        ++out->stats_.not_generated;
        continue;
      }
      auto generated = codegen::generate_fusion_kernel(*program.module, *inst);
      if (!generated.is_ok()) {
        out->refused_[inst] = generated.status().message();
        ++out->stats_.fallback;
        continue;
      }
      SL_ASSIGN_OR_RETURN(nvrtc::Compiled bin,
                          nvrtc::compile(generated->source, generated->name, {.arch = arch, .cache_dir = cache_dir}));
      (bin.from_cache ? out->stats_.cached_ms : out->stats_.cold_ms) += bin.milliseconds;
      out->stats_.cache_hits += bin.from_cache ? 1 : 0;
      Kernel k;
      k.generated = std::move(*generated);
      const auto load_start = std::chrono::steady_clock::now();
      SL_CUDA(cudaLibraryLoadData(&k.library, bin.binary.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
              "loading the generated kernel of fusion " + inst->name);
      SL_CUDA(cudaLibraryGetKernel(&k.kernel, k.library, k.generated.name.c_str()),
              "finding the generated kernel of fusion " + inst->name);
      out->stats_.load_ms += ms_since(load_start);
      ++out->stats_.generated;
      out->kernels_.emplace(inst, std::move(k));
    }
  }
  return out;
}

Status GeneratedFusions::launch(const sched::Thunk& t, DeviceContext& ctx) const {
  auto it = kernels_.find(t.instruction);
  if (it == kernels_.end()) {
    auto why = refused_.find(t.instruction);
    return runtime_error(fmt::format("{}: no generated kernel ({}), and the cuda backend runs fusions only as "
                                     "generated kernels",
                                     where(t, ctx), why != refused_.end() ? why->second : "not built"));
  }
  const Kernel& k = it->second;
  const size_t n = static_cast<size_t>(k.generated.inputs + k.generated.outputs);
  if (t.operands.size() != static_cast<size_t>(k.generated.inputs) ||
      t.results.size() != static_cast<size_t>(k.generated.outputs)) {
    return runtime_error(fmt::format("{}: {} operand / {} result buffers, the generated kernel takes {} / {}",
                                     where(t, ctx), t.operands.size(), t.results.size(), k.generated.inputs,
                                     k.generated.outputs));
  }
  std::vector<void*> pointers(n);
  std::vector<void*> args(n);
  for (size_t a = 0; a < n; ++a) {
    pointers[a] = a < t.operands.size() ? ctx.at(t.operands[a]) : ctx.at(t.results[a - t.operands.size()]);
    args[a] = &pointers[a];
  }
  const dim3 grid(static_cast<unsigned>(k.generated.blocks(ctx.sm_count > 0 ? ctx.sm_count : sm_count_)));
  const dim3 block(codegen::kBlockThreads);
  SL_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(k.kernel), grid, block, args.data(), 0, ctx.stream(t.stream)),
          where(t, ctx));
  return Status::ok();
}

void GeneratedFusions::add_counters(trace::Trace* trace) const {
  trace->add_counter("codegen_fusions_generated", stats_.generated, "fusions run as one generated kernel each");
  trace->add_counter("codegen_fusions_fallback", stats_.fallback,
                     "kLoop/kInput fusions the generator refused (their reason is the run's error)");
  trace->add_counter("codegen_fusions_other_kinds", stats_.not_generated, "fusions of kinds with no generator (kCustom)");
  trace->add_counter("codegen_cache_hits", stats_.cache_hits, "generated kernels read from the disk cache");
  trace->add_counter("codegen_nvrtc_cold_us", static_cast<int64_t>(stats_.cold_ms * 1000),
                     "NVRTC time of the kernels not in the cache (microseconds)");
  trace->add_counter("codegen_nvrtc_cached_us", static_cast<int64_t>(stats_.cached_ms * 1000),
                     "time reading cached kernels (microseconds)");
  trace->add_counter("codegen_load_us", static_cast<int64_t>(stats_.load_ms * 1000),
                     "cudaLibraryLoadData of the generated kernels (microseconds)");
}

}  // namespace sl::exec::cuda

namespace sl::exec::cuda {

Status CudaBackend::setup_fusions(const sched::LoweredProgram& program) {
  if (devices_.empty()) return Status::ok();
  SL_CUDA(cudaSetDevice(devices_[0].ordinal), "");
  cudaDeviceProp prop{};
  SL_CUDA(cudaGetDeviceProperties(&prop, devices_[0].ordinal), "");
  std::string cache = options_.codegen_cache.empty() ? nvrtc::default_cache_dir() : options_.codegen_cache;
  if (cache == "off") cache.clear();
  SL_ASSIGN_OR_RETURN(fusions_,
                      GeneratedFusions::build(program, fmt::format("sm_{}{}", prop.major, prop.minor), cache));
  for (DeviceContext& ctx : devices_) ctx.fusions = fusions_.get();
  return Status::ok();
}

}  // namespace sl::exec::cuda
