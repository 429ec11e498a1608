// Generated fusion kernels: build, load, launch (generated_fusions.h).

#include "core/exec/cuda/generated_fusions.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <span>

#include "core/exec/cuda/cuda_backend_impl.h"
#include "core/exec/cuda/cuda_check.h"
#include "core/exec/cuda/device_context.h"
#include "core/exec/cuda/host_convert.h"
#include "core/sched/gemm.h"
#include "core/exec/nvrtc/nvrtc_compiler.h"

namespace sl::exec::cuda {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

GeneratedFusions::~GeneratedFusions() {
  for (cudaLibrary_t l : libraries_) cudaLibraryUnload(l);
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
      if (inst == nullptr || inst->opcode != hlo::Opcode::kFusion || out->entries_.count(inst)) continue;
      Entry e;
      e.plan = codegen::plan_fusion(*program.module, *inst);
      if (!inst->called.empty()) {
        e.computation = &program.module->computations.at(static_cast<size_t>(inst->called[0]));
        e.outputs = codegen::fusion_outputs(*e.computation).size();
      }
      switch (e.plan.path) {
        case codegen::FusionPath::kGenerated: ++out->stats_.generated; break;
        case codegen::FusionPath::kCublasGemm: ++out->stats_.gemm; break;
        case codegen::FusionPath::kOpByOp:
          ++out->stats_.op_by_op;
          e.trace_name = inst->name + " [op-by-op]";
          break;
        case codegen::FusionPath::kNone: ++out->stats_.none; break;
      }
      out->stats_.hoisted += e.plan.hoisted_reduces;
      for (codegen::FusionStep& step : e.plan.steps) {
        Kernel k;
        if (!step.is_gemm) {
          SL_ASSIGN_OR_RETURN(nvrtc::Compiled bin, nvrtc::compile(step.kernel.source, step.kernel.name,
                                                                  {.arch = arch, .cache_dir = cache_dir}));
          (bin.from_cache ? out->stats_.cached_ms : out->stats_.cold_ms) += bin.milliseconds;
          out->stats_.cache_hits += bin.from_cache ? 1 : 0;
          ++out->stats_.kernels;
          const auto load_start = std::chrono::steady_clock::now();
          SL_CUDA(cudaLibraryLoadData(&k.library, bin.binary.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
                  "loading the generated kernel " + step.kernel.name + " of fusion " + inst->name);
          out->libraries_.push_back(k.library);
          SL_CUDA(cudaLibraryGetKernel(&k.kernel, k.library, step.kernel.name.c_str()),
                  "finding the generated kernel " + step.kernel.name + " of fusion " + inst->name);
          out->stats_.load_ms += ms_since(load_start);
          k.generated = step.kernel;
        }
        e.kernels.push_back(std::move(k));
      }
      for (const codegen::TempBuffer& tb : e.plan.temps) {
        e.temp_offsets.push_back(out->stats_.scratch_bytes);
        out->stats_.scratch_bytes += (tb.bytes() + 255) / 256 * 256;
      }
      out->entries_.emplace(inst, std::move(e));
    }
  }
  return out;
}

Status GeneratedFusions::attach(DeviceContext& ctx) const {
  if (stats_.scratch_bytes == 0) return ok_status();
  const std::string at = fmt::format("fusion temporaries ({} bytes) on device {}", stats_.scratch_bytes, ctx.ordinal);
  SL_CUDA(cudaSetDevice(ctx.ordinal), at);
  SL_CUDA(cudaMalloc(reinterpret_cast<void**>(&ctx.scratch), static_cast<size_t>(stats_.scratch_bytes)), at);
  // Constants of op-by-op runs live in their temporaries from the start.
  for (const auto& [inst, e] : entries_) {
    if (e.plan.path != codegen::FusionPath::kOpByOp) continue;
    for (size_t n = 0; n < e.plan.temps.size(); ++n) {
      const hlo::Instruction& c = e.computation->instructions.at(static_cast<size_t>(e.plan.temps[n].instruction));
      if (c.opcode != hlo::Opcode::kConstant) continue;
      Literal lit{c.shape, c.literal};
      if (lit.values.size() == 1 && c.shape.element_count() != 1) {
        lit.values.assign(static_cast<size_t>(c.shape.element_count()), lit.values[0]);
      }
      auto bytes = encode_literal(lit);
      SL_CUDA(cudaMemcpy(ctx.scratch + e.temp_offsets[n], bytes.data(), bytes.size(), cudaMemcpyHostToDevice),
              fmt::format("constant '{}' of fusion {}", c.name, inst->name));
    }
  }
  return ok_status();
}

const std::string* GeneratedFusions::trace_name(const hlo::Instruction* fusion) const {
  auto it = entries_.find(fusion);
  return it == entries_.end() || it->second.trace_name.empty() ? nullptr : &it->second.trace_name;
}

Status GeneratedFusions::launch(const sched::Thunk& t, DeviceContext& ctx) const {
  auto it = entries_.find(t.instruction);
  if (it == entries_.end()) return runtime_error(fmt::format("{}: fusion not planned", where(t, ctx)));
  const Entry& e = it->second;
  if (e.plan.path == codegen::FusionPath::kNone || e.computation == nullptr) {
    return runtime_error(fmt::format("{}: the cuda backend cannot run this fusion: {}", where(t, ctx), e.plan.why));
  }
  const hlo::Computation& c = *e.computation;
  if (t.operands.size() != c.parameters.size() || t.results.size() < e.outputs) {
    return runtime_error(fmt::format("{}: {} operand / {} result buffers, the fused computation has {} / {}",
                                     where(t, ctx), t.operands.size(), t.results.size(), c.parameters.size(),
                                     e.outputs));
  }
  switch (e.plan.path) {
    case codegen::FusionPath::kGenerated:
    case codegen::FusionPath::kCublasGemm: return launch_steps(e, t, ctx);
    case codegen::FusionPath::kOpByOp: return launch_op_by_op(e, t, ctx);
    case codegen::FusionPath::kNone: break;
  }
  return ok_status();
}

bool GeneratedFusions::uses_shared_state(const hlo::Instruction* fusion) const {
  auto it = entries_.find(fusion);
  if (it == entries_.end()) return false;
  const Entry& e = it->second;
  if (e.plan.path == codegen::FusionPath::kOpByOp || !e.temp_offsets.empty()) return true;
  return std::any_of(e.plan.steps.begin(), e.plan.steps.end(), [](const codegen::FusionStep& s) { return s.is_gemm; });
}

Status GeneratedFusions::launch_steps(const Entry& e, const sched::Thunk& t, DeviceContext& ctx) const {
  auto pointer = [&](const codegen::BufferRef& r) -> void* {
    switch (r.kind) {
      case codegen::BufferRef::kOperand: return ctx.at(t.operands[static_cast<size_t>(r.index)]);
      case codegen::BufferRef::kResult: return ctx.at(t.results[static_cast<size_t>(r.index)]);
      case codegen::BufferRef::kTemp: return ctx.scratch + e.temp_offsets[static_cast<size_t>(r.index)];
    }
    return nullptr;
  };
  cudaStream_t stream = ctx.stream(t.stream);
  for (size_t s = 0; s < e.plan.steps.size(); ++s) {
    const codegen::FusionStep& step = e.plan.steps[s];
    if (step.is_gemm) {
      const codegen::GemmCall& g = step.gemm;
      GemmProblem p;
      p.type = static_cast<int>(g.type);
      p.out_type = static_cast<int>(g.out_type);
      p.m = g.m;
      p.n = g.n;
      p.k = g.k;
      p.batch = g.batch;
      p.lhs_transposed = g.lhs_transposed;
      p.rhs_transposed = g.rhs_transposed;
      p.lhs_ld = g.lhs_ld;
      p.rhs_ld = g.rhs_ld;
      p.lhs_batch_stride = g.lhs_batch_stride;
      p.rhs_batch_stride = g.rhs_batch_stride;
      p.allow_tf32 = ctx.allow_tf32 || (g.tf32 && !ctx.exact_f32_gemms);
      p.alpha = static_cast<float>(g.alpha);
      if (g.has_bias) p.epilogue = GemmEpilogue::kBias;
      SL_RETURN_IF_ERROR(ctx.gemm->run(p, pointer(g.lhs), pointer(g.rhs), pointer(g.out), ctx.fallback_workspace,
                                       ctx.fallback_workspace_bytes, stream, where(t, ctx), nullptr,
                                       g.has_bias ? pointer(g.bias) : nullptr));
      continue;
    }
    if (step.skip_if_aliased >= 0 &&
        ctx.at(t.operands[static_cast<size_t>(step.skip_if_aliased)]) == ctx.at(t.results[0])) {
      continue;
    }
    const Kernel& k = e.kernels[s];
    // On the stack for the usual fusion: this runs for every launch.
    constexpr size_t kInline = 32;
    std::array<void*, kInline> inline_pointers{}, inline_args{};
    std::vector<void*> heap_pointers, heap_args;
    void** pointers = inline_pointers.data();
    void** args = inline_args.data();
    if (step.args.size() > kInline) {
      heap_pointers.resize(step.args.size());
      heap_args.resize(step.args.size());
      pointers = heap_pointers.data();
      args = heap_args.data();
    }
    for (size_t a = 0; a < step.args.size(); ++a) {
      pointers[a] = pointer(step.args[a]);
      args[a] = &pointers[a];
    }
    const dim3 grid(static_cast<unsigned>(k.generated.blocks(ctx.sm_count > 0 ? ctx.sm_count : sm_count_)));
    const dim3 block(codegen::kBlockThreads);
    // The error text only on failure: this runs for every launch.
    const cudaError_t launched = cudaLaunchKernel(reinterpret_cast<const void*>(k.kernel), grid, block, args, 0, stream);
    if (launched != cudaSuccess) {
      return cuda_status(launched, "cudaLaunchKernel", where(t, ctx) + " (" + k.generated.name + ")");
    }
  }
  return ok_status();
}

// The fused computation's instructions one after another through the
// per-op kernels (issue_kernel / issue_gemm), as thunks of their own whose
// buffers are the fusion's operands, results and temporaries.
Status GeneratedFusions::launch_op_by_op(const Entry& e, const sched::Thunk& t, DeviceContext& ctx) const {
  const hlo::Computation& c = *e.computation;
  auto slice = [&](const codegen::BufferRef& r) -> sched::BufferSlice {
    switch (r.kind) {
      case codegen::BufferRef::kOperand: return t.operands[static_cast<size_t>(r.index)];
      case codegen::BufferRef::kResult: return t.results[static_cast<size_t>(r.index)];
      case codegen::BufferRef::kTemp: {
        const auto n = static_cast<size_t>(r.index);
        return {kScratchBase + e.temp_offsets[n], e.plan.temps[n].bytes()};
      }
    }
    return {};
  };
  for (int k : e.plan.op_order) {
    const hlo::Instruction& inst = c.instructions[static_cast<size_t>(k)];
    if (inst.opcode == hlo::Opcode::kConstant) continue;  // in its temporary since attach()
    std::vector<sched::BufferSlice> operands;
    for (int o : inst.operands) operands.push_back(slice(e.plan.slots[static_cast<size_t>(o)]));
    const sched::BufferSlice result = slice(e.plan.slots[static_cast<size_t>(k)]);
    sched::Thunk sub;
    sub.kind = inst.opcode == hlo::Opcode::kDot ? sched::ThunkKind::kGemm : sched::ThunkKind::kKernel;
    sub.stream = t.stream;
    sub.computation = &c;
    sub.instruction = &inst;
    sub.attributed_name = t.attributed_name;
    sub.operands = operands;
    sub.results = std::span<const sched::BufferSlice>(&result, 1);
    if (inst.opcode == hlo::Opcode::kDot) sub.gemm = sched::gemm_dims(c, inst);
    SL_RETURN_IF_ERROR(sub.kind == sched::ThunkKind::kGemm ? issue_gemm(sub, ctx) : issue_kernel(sub, ctx));
  }
  for (const auto& [leaf, from] : e.plan.copies) {
    const sched::BufferSlice src = slice(from);
    const sched::BufferSlice& dst = t.results[static_cast<size_t>(leaf)];
    SL_CUDA(cudaMemcpyAsync(ctx.at(dst), ctx.at(src), static_cast<size_t>(std::min(src.size, dst.size)),
                            cudaMemcpyDeviceToDevice, ctx.stream(t.stream)),
            where(t, ctx));
  }
  return ok_status();
}

void GeneratedFusions::add_counters(trace::Trace* trace) const {
  trace->add_counter("codegen_fusions_generated", stats_.generated, "fusions run as generated kernels");
  trace->add_counter("codegen_fusions_gemm", stats_.gemm,
                     "Triton GEMM fusions run as a cuBLASLt GEMM with generated prologue/epilogue kernels");
  trace->add_counter("codegen_fallback_fusions", stats_.op_by_op,
                     "fusions with no generated kernel, run op by op (their kernels are named 'NAME [op-by-op]')");
  trace->add_counter("codegen_fusions_unsupported", stats_.none,
                     "fusions with neither a generated nor per-op kernels (issuing one fails, naming why)");
  trace->add_counter("codegen_hoisted_reduces", stats_.hoisted,
                     "reduces nested in a loop, computed once by a kernel of their own");
  trace->add_counter("codegen_kernels", stats_.kernels, "generated kernels compiled and loaded");
  trace->add_counter("codegen_scratch_bytes", stats_.scratch_bytes, "fusion temporaries per device (bytes)");
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
  if (devices_.empty()) return ok_status();
  SL_CUDA(cudaSetDevice(devices_[0].ordinal), "");
  cudaDeviceProp prop{};
  SL_CUDA(cudaGetDeviceProperties(&prop, devices_[0].ordinal), "");
  std::string cache = options_.codegen_cache.empty() ? nvrtc::default_cache_dir() : options_.codegen_cache;
  if (cache == "off") cache.clear();
  SL_ASSIGN_OR_RETURN(fusions_,
                      GeneratedFusions::build(program, fmt::format("sm_{}{}", prop.major, prop.minor), cache));
  for (DeviceContext& ctx : devices_) {
    SL_RETURN_IF_ERROR(fusions_->attach(ctx));
    ctx.fusions = fusions_.get();
  }
  return ok_status();
}

}  // namespace sl::exec::cuda
