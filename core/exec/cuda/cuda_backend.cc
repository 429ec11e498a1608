#include "core/exec/cuda/cuda_backend.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <atomic>
#include <set>
#include <thread>

#include "core/exec/cuda/cuda_check.h"
#include "core/exec/cuda/device_context.h"
#include "core/exec/cuda/host_convert.h"
#include "core/exec/cuda/nccl_collectives.h"
#include "core/exec/event_kind.h"
#include "cupti_tracer/collector.h"
#include "cupti_tracer/cupti_api.h"

namespace sl::exec {

using cuda::DeviceContext;
using hlo::PrimitiveType;
using sched::Thunk;
using sched::ThunkKind;

static_assert(static_cast<int>(PrimitiveType::kPred) == 0 && static_cast<int>(PrimitiveType::kF64) == 8,
              "kernels.cu indexes element types by hlo::PrimitiveType value");

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

namespace {

constexpr size_t kFallbackWorkspaceBytes = size_t{32} << 20;

// External correlation id of one thunk occurrence: iteration, device, index.
uint64_t external_id(int iteration, int64_t device, size_t thunk) {
  return (static_cast<uint64_t>(iteration + 1) << 44) | (static_cast<uint64_t>(device) << 32) |
         static_cast<uint64_t>(thunk);
}

trace::EventKind kind_of(const Thunk& t) {
  switch (t.kind) {
    case ThunkKind::kGemm: return trace::EventKind::kGemm;
    case ThunkKind::kCollective: return trace::EventKind::kCollective;
    default: return t.instruction ? event_kind_of(*t.instruction) : trace::EventKind::kOther;
  }
}

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(CudaOptions options) : options_(options) {}
  std::string name() const override { return "cuda"; }
  Result<RunOutput> run(const sched::LoweredProgram& program, const RunOptions& options) override;

 private:
  Status setup(const sched::LoweredProgram& program, const RunOptions& options);
  Status init_memory(const sched::LoweredProgram& program, const RunOptions& options);
  Status issue(DeviceContext& ctx, int iteration, bool keep, cupti::ActivityCollector* collector);
  void teardown();

  CudaOptions options_;
  std::vector<DeviceContext> devices_;
  std::unique_ptr<cuda::NcclComms> comms_;
};

Status CudaBackend::setup(const sched::LoweredProgram& program, const RunOptions& options) {
  int visible = 0;
  cudaError_t e = cudaGetDeviceCount(&visible);
  if (e != cudaSuccess || visible == 0) {
    return runtime_error(std::string("no GPU: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device"));
  }
  const int64_t n = static_cast<int64_t>(program.devices.size());
  if (n > visible) {
    return runtime_error(fmt::format("the program needs {} devices, {} GPU(s) visible", n, visible));
  }
  devices_.resize(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) {
    DeviceContext& ctx = devices_[static_cast<size_t>(d)];
    const sched::DeviceProgram& dp = program.devices[static_cast<size_t>(d)];
    ctx.ordinal = static_cast<int>(d);
    ctx.program = &dp;
    ctx.module = program.module;
    ctx.allow_tf32 = options.allow_tf32;
    ctx.world_size = n;
    const std::string at = fmt::format("device {}", d);
    SL_CUDA(cudaSetDevice(ctx.ordinal), at);
    ctx.arena_bytes = program.buffers.arena_bytes;
    if (ctx.arena_bytes > 0) {
      cudaError_t m = cudaMalloc(reinterpret_cast<void**>(&ctx.arena), static_cast<size_t>(ctx.arena_bytes));
      if (m != cudaSuccess) {
        size_t free_b = 0, total_b = 0;
        cudaGetLastError();
        cudaMemGetInfo(&free_b, &total_b);
        return runtime_error(fmt::format("out of GPU memory on device {}: the arena needs {} bytes, {} of {} free ({})",
                                         d, ctx.arena_bytes, free_b, total_b, cudaGetErrorString(m)));
      }
    }
    std::set<int> streams{sched::kMainStream};
    for (const Thunk& t : dp.thunks) streams.insert(t.stream);
    for (int s : streams) {
      cudaStream_t cs = nullptr;
      SL_CUDA(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking), at);
      ctx.streams[s] = cs;
    }
    ctx.events.resize(static_cast<size_t>(dp.num_events), nullptr);
    for (auto& ev : ctx.events) SL_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), at);
    SL_ASSIGN_OR_RETURN(ctx.gemm, cuda::GemmRunner::create());
    SL_CUDA(cudaMalloc(&ctx.fallback_workspace, kFallbackWorkspaceBytes), at);
    ctx.fallback_workspace_bytes = kFallbackWorkspaceBytes;
  }
  bool any_collective = false;
  for (const auto& dp : program.devices) {
    for (const Thunk& t : dp.thunks) any_collective |= t.kind == ThunkKind::kCollective;
  }
  if (any_collective) {
    SL_ASSIGN_OR_RETURN(comms_, cuda::NcclComms::create(program));
    for (auto& ctx : devices_) ctx.comms = comms_.get();
  }
  return Status::ok();
}

Status CudaBackend::init_memory(const sched::LoweredProgram& program, const RunOptions& options) {
  const hlo::Computation& entry = program.module->entry_computation();
  for (DeviceContext& ctx : devices_) {
    SL_CUDA(cudaSetDevice(ctx.ordinal), "");
    const int64_t device = ctx.program->device;
    for (size_t p = 0; p < program.buffers.parameters.size(); ++p) {
      if (p >= entry.parameters.size()) break;
      const hlo::Shape& shape = entry.instructions[static_cast<size_t>(entry.parameters[p])].shape;
      auto leaves = shape.leaves();
      const auto& slices = program.buffers.parameters[p];
      for (size_t l = 0; l < leaves.size() && l < slices.size(); ++l) {
        if (slices[l].offset < 0 || !leaves[l]->is_array()) continue;
        Literal lit = options.init == InitMode::kRandom
                          ? random_literal(*leaves[l], options.seed, device, static_cast<int64_t>(p))
                          : ramp_literal(*leaves[l], device, static_cast<int64_t>(p));
        auto bytes = cuda::encode_literal(lit);
        SL_CUDA(cudaMemcpy(ctx.at(slices[l]), bytes.data(), bytes.size(), cudaMemcpyHostToDevice),
                fmt::format("parameter {} on device {}", p, device));
      }
    }
    for (const sched::ConstantBuffer& c : program.buffers.constants) {
      if (c.slice.offset < 0 || !c.instruction->shape.is_array()) continue;
      Literal lit{c.instruction->shape, c.instruction->literal};
      auto bytes = cuda::encode_literal(lit);
      SL_CUDA(cudaMemcpy(ctx.at(c.slice), bytes.data(), bytes.size(), cudaMemcpyHostToDevice),
              fmt::format("constant '{}' on device {}", c.instruction->name, device));
    }
  }
  return Status::ok();
}

// Issues one iteration of a device's thunks in program order. Called on the
// device's own host thread (external correlation ids are per thread).
Status CudaBackend::issue(DeviceContext& ctx, int iteration, bool keep, cupti::ActivityCollector* collector) {
  SL_CUDA(cudaSetDevice(ctx.ordinal), "");
  const sched::DeviceProgram& dp = *ctx.program;
  // For dependency edges: last work thunk on each stream, and per event the
  // work it covers; the next work on a waiting stream depends on it.
  std::map<int, uint64_t> last_on_stream;
  std::map<int, uint64_t> event_covers;
  std::map<int, std::vector<uint64_t>> pending_waits;
  for (size_t i = 0; i < dp.thunks.size(); ++i) {
    const Thunk& t = dp.thunks[i];
    if (t.kind == ThunkKind::kRecordEvent) {
      SL_CUDA(cudaEventRecord(ctx.events.at(static_cast<size_t>(t.event)), ctx.stream(t.stream)),
              fmt::format("event {} on device {}", t.event, dp.device));
      if (auto it = last_on_stream.find(t.stream); it != last_on_stream.end()) event_covers[t.event] = it->second;
      continue;
    }
    if (t.kind == ThunkKind::kWaitEvent) {
      SL_CUDA(cudaStreamWaitEvent(ctx.stream(t.stream), ctx.events.at(static_cast<size_t>(t.event)), 0),
              fmt::format("wait for event {} on device {}", t.event, dp.device));
      if (auto it = event_covers.find(t.event); it != event_covers.end()) pending_waits[t.stream].push_back(it->second);
      continue;
    }
    const uint64_t ext = external_id(iteration, dp.device, i);
    if (collector != nullptr) {
      collector->register_launch(ext, {.device = static_cast<int32_t>(dp.device), .stream = t.stream,
                                       .kind = kind_of(t), .instruction = std::string(t.attributed_name),
                                       .flops = t.flops,
                                       .bytes = t.bytes_accessed, .iteration = iteration, .keep = keep});
      for (uint64_t from : pending_waits[t.stream]) collector->add_wait_edge(from, ext);
    }
    pending_waits[t.stream].clear();
    last_on_stream[t.stream] = ext;
    cupti::ExternalIdScope scope(ext, collector != nullptr);
    SL_RETURN_IF_ERROR(scope.status());
    switch (t.kind) {
      case ThunkKind::kKernel: SL_RETURN_IF_ERROR(cuda::issue_kernel(t, ctx)); break;
      case ThunkKind::kGemm: SL_RETURN_IF_ERROR(cuda::issue_gemm(t, ctx)); break;
      case ThunkKind::kCollective: SL_RETURN_IF_ERROR(cuda::issue_collective(t, ctx)); break;
      default: break;
    }
  }
  return Status::ok();
}

void CudaBackend::teardown() {
  comms_.reset();
  for (DeviceContext& ctx : devices_) {
    cudaSetDevice(ctx.ordinal);
    cudaDeviceSynchronize();
    for (auto& [s, cs] : ctx.streams) cudaStreamDestroy(cs);
    for (cudaEvent_t ev : ctx.events) if (ev) cudaEventDestroy(ev);
    ctx.gemm.reset();
    if (ctx.fallback_workspace) cudaFree(ctx.fallback_workspace);
    if (ctx.arena) cudaFree(ctx.arena);
  }
  devices_.clear();
}

Result<RunOutput> CudaBackend::run(const sched::LoweredProgram& program, const RunOptions& options) {
  if (program.module == nullptr) return invalid_input("lowered program has no module");
  struct Cleanup {
    CudaBackend* self;
    ~Cleanup() { self->teardown(); }
  } cleanup{this};

  std::unique_ptr<cupti::ActivityCollector> collector;
  if (options_.trace) {
    collector = std::make_unique<cupti::ActivityCollector>();
    // Enabled before any CUDA work so the context is traced from its start.
    SL_RETURN_IF_ERROR(cupti::CuptiApi::start(collector.get()));
  }
  struct StopTracer {
    bool on;
    ~StopTracer() { if (on) (void)cupti::CuptiApi::stop(); }
  } stop_tracer{options_.trace};

  SL_RETURN_IF_ERROR(setup(program, options));
  SL_RETURN_IF_ERROR(init_memory(program, options));
  for (DeviceContext& ctx : devices_) {
    SL_CUDA(cudaSetDevice(ctx.ordinal), "");
    SL_CUDA(cudaDeviceSynchronize(), "initialising parameters");
    if (collector) {
      for (auto& [s, cs] : ctx.streams) {
        SL_ASSIGN_OR_RETURN(uint32_t id, cupti::CuptiApi::stream_id(cs));
        collector->map_stream(static_cast<uint32_t>(ctx.ordinal), id, s);
      }
    }
  }

  const int warmup = std::max(0, options.warmup);
  const int iterations = std::max(1, options.iterations);
  const int64_t total = warmup + iterations;
  for (int it = 0; it < total; ++it) {
    const bool keep = it >= warmup;
    const int iteration = it - warmup;
    std::vector<Status> statuses(devices_.size());
    std::vector<std::thread> threads;
    for (size_t d = 0; d < devices_.size(); ++d) {
      threads.emplace_back([&, d] { statuses[d] = issue(devices_[d], keep ? iteration : -1 - it, keep, collector.get()); });
    }
    for (auto& th : threads) th.join();
    for (const Status& s : statuses) SL_RETURN_IF_ERROR(s);
    for (DeviceContext& ctx : devices_) {
      SL_CUDA(cudaSetDevice(ctx.ordinal), "");
      SL_CUDA(cudaDeviceSynchronize(), fmt::format("iteration {} on device {}", it, ctx.program->device));
    }
    if (options.progress) options.progress(it + 1, total);
  }

  RunOutput out;
  if (collector) {
    SL_RETURN_IF_ERROR(cupti::CuptiApi::flush());
    out.trace = collector->build_trace();
    out.trace.normalize_time();
  }
  if (options.collect_results) {
    const hlo::Computation& entry = program.module->entry_computation();
    const hlo::Instruction& root =
        entry.instructions.at(static_cast<size_t>(entry.root >= 0 ? entry.root : entry.instructions.size() - 1));
    auto leaves = root.shape.leaves();
    for (DeviceContext& ctx : devices_) {
      SL_CUDA(cudaSetDevice(ctx.ordinal), "");
      DeviceResults r;
      r.device = ctx.program->device;
      r.replica = ctx.program->replica;
      r.partition = ctx.program->partition;
      for (size_t l = 0; l < leaves.size() && l < program.buffers.outputs.size(); ++l) {
        const sched::BufferSlice& s = program.buffers.outputs[l];
        std::vector<uint8_t> bytes(static_cast<size_t>(std::max<int64_t>(s.size, 0)));
        if (s.offset >= 0 && !bytes.empty()) {
          SL_CUDA(cudaMemcpy(bytes.data(), ctx.at(s), bytes.size(), cudaMemcpyDeviceToHost), "copying results back");
        }
        if (leaves[l]->is_array()) {
          if (bytes.size() < static_cast<size_t>(leaves[l]->byte_size())) bytes.resize(leaves[l]->byte_size());
          r.outputs.push_back(cuda::decode_literal(*leaves[l], bytes.data()));
        }
      }
      out.results.push_back(std::move(r));
    }
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  out.device_description = fmt::format("{} x{}", prop.name, devices_.size());
  return out;
}

}  // namespace

Result<std::unique_ptr<Backend>> make_cuda_backend(const CudaOptions& options) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return runtime_error(std::string("no GPU: ") + cudaGetErrorString(e));
  if (n == 0) return runtime_error("no GPU: no CUDA device is visible");
  return std::unique_ptr<Backend>(new CudaBackend(options));
}

}  // namespace sl::exec
