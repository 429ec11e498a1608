// Device setup and teardown for the CUDA backend: checking the GPUs against
// the program, per-device arena, streams, events and cuBLASLt runner, the
// NCCL communicators, parameter and constant initialisation.

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/exec/cuda/cuda_backend_impl.h"
#include "core/exec/cuda/cuda_check.h"
#include "core/exec/cuda/host_convert.h"
#include "core/exec/cuda/kernels.h"
#include "core/exec/literal.h"
#include "cupti_tracer/cupti_api.h"

namespace sl::exec {

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

std::string cuda_device_name(int ordinal) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, ordinal) != cudaSuccess) return "cuda";
  return prop.name;
}

}  // namespace sl::exec

namespace sl::exec::cuda {

using sched::Thunk;
using sched::ThunkKind;

std::vector<int64_t> CudaBackend::local_devices(const sched::LoweredProgram& program) const {
  std::vector<int64_t> out;
  if (options_.dist) {
    out.push_back(options_.dist->rank);
  } else {
    for (size_t d = 0; d < program.devices.size(); ++d) out.push_back(static_cast<int64_t>(d));
  }
  return out;
}

Status CudaBackend::agree_on_time_origin(cupti::ActivityCollector* collector) {
  if (!rendezvous_) return ok_status();
  SL_RETURN_IF_ERROR(rendezvous_->barrier());
  std::string origin;
  if (rendezvous_->rank() == 0 && collector != nullptr) {
    SL_ASSIGN_OR_RETURN(uint64_t now, cupti::CuptiApi::timestamp());
    origin = std::to_string(now);
  }
  SL_ASSIGN_OR_RETURN(origin, rendezvous_->broadcast(origin));
  if (collector != nullptr && !origin.empty()) collector->set_time_origin(std::stoull(origin));
  return ok_status();
}

Status CudaBackend::setup(const sched::LoweredProgram& program, const RunOptions& options) {
  int visible = 0;
  cudaError_t e = cudaGetDeviceCount(&visible);
  if (e != cudaSuccess || visible == 0) {
    return runtime_error(std::string("no GPU: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device"));
  }
  const int64_t n = static_cast<int64_t>(program.devices.size());
  if (options_.dist) {
    const dist::DistEnv& env = *options_.dist;
    if (env.world_size != n) {
      return invalid_input(fmt::format("the program has {} devices but WORLD_SIZE is {}: start one process per device",
                                       n, env.world_size));
    }
    if (env.local_rank >= visible) {
      return runtime_error(fmt::format("LOCAL_RANK {} needs GPU {}, but {} GPU(s) are visible", env.local_rank,
                                       env.local_rank, visible));
    }
    SL_ASSIGN_OR_RETURN(rendezvous_, dist::Rendezvous::connect(env));
  } else if (n > visible) {
    return runtime_error(fmt::format("the program needs {} devices, {} GPU(s) visible", n, visible));
  }
  const std::vector<int64_t> local = local_devices(program);
  devices_.resize(local.size());
  for (size_t i = 0; i < local.size(); ++i) SL_RETURN_IF_ERROR(setup_device(program, options, local[i], devices_[i]));
  SL_RETURN_IF_ERROR(setup_fusions(program));
  return setup_collectives(program, options, local);
}

Status CudaBackend::setup_device(const sched::LoweredProgram& program, const RunOptions& options, int64_t d,
                                 DeviceContext& ctx) {
  const sched::DeviceProgram& dp = program.devices[static_cast<size_t>(d)];
  ctx.ordinal = options_.dist ? options_.dist->local_rank : static_cast<int>(d);
  ctx.program = &dp;
  ctx.module = program.module;
  ctx.allow_tf32 = options.allow_tf32;
  ctx.exact_f32_gemms = options.exact_f32_gemms;
  ctx.comm_sms = options.comm_sms;
  ctx.world_size = static_cast<int64_t>(program.devices.size());
  const std::string at = fmt::format("device {}", d);
  SL_CUDA(cudaSetDevice(ctx.ordinal), at);
  SL_CUDA(cudaDeviceGetAttribute(&ctx.sm_count, cudaDevAttrMultiProcessorCount, ctx.ordinal), at);
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
  // Communication streams get the highest priority, as XLA gives its async
  // collective streams (xla_gpu_enable_highest_priority_async_stream): a
  // collective issued beside a GEMM then gets SMs as the GEMM's first CTAs
  // retire instead of after all of them (measured on H200: without it, an
  // all-gather queued behind a GEMM's CTAs started 1.2 ms late).
  int least_priority = 0, greatest_priority = 0;
  SL_CUDA(cudaDeviceGetStreamPriorityRange(&least_priority, &greatest_priority), at);
  for (int s : streams) {
    cudaStream_t cs = nullptr;
    const int priority = sched::stream_kind(s) == sched::StreamKind::kCommunication ? greatest_priority : 0;
    SL_CUDA(cudaStreamCreateWithPriority(&cs, cudaStreamNonBlocking, priority), at);
    ctx.streams[s] = cs;
  }
  ctx.events.resize(static_cast<size_t>(dp.num_events), nullptr);
  for (auto& ev : ctx.events) SL_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), at);
  for (auto& [s, cs] : ctx.streams) {
    SL_CUDA(cudaEventCreateWithFlags(&ctx.join_events[s], cudaEventDisableTiming), at);
  }
  SL_CUDA(cudaEventCreateWithFlags(&ctx.boundary_event, cudaEventDisableTiming), at);
  SL_ASSIGN_OR_RETURN(ctx.gemm, GemmRunner::create());
  SL_CUDA(cudaMalloc(&ctx.fallback_workspace, kFallbackWorkspaceBytes), at);
  ctx.fallback_workspace_bytes = kFallbackWorkspaceBytes;
  return ok_status();
}

// NCCL communicators when the program has collectives, and the events the
// stall watch polls when --nccl-timeout is on.
Status CudaBackend::setup_collectives(const sched::LoweredProgram& program, const RunOptions& options,
                                      const std::vector<int64_t>& local) {
  bool any_collective = false;
  for (const auto& dp : program.devices) {
    for (const Thunk& t : dp.thunks) any_collective |= t.kind == ThunkKind::kCollective;
  }
  if (!any_collective) return ok_status();
  const CommOptions comm_options{.single_cta_clusters = options.comm_sms > 0};
  if (rendezvous_) {
    SL_ASSIGN_OR_RETURN(comms_, NcclComms::create_for_rank(program, comm_options, *rendezvous_, local[0],
                                                           devices_[0].ordinal));
  } else {
    SL_ASSIGN_OR_RETURN(comms_, NcclComms::create(program, comm_options));
  }
  for (auto& ctx : devices_) ctx.comms = comms_.get();
  if (options.nccl_timeout_s > 0) {
    const int total = std::max(0, options.warmup) + std::max(1, options.iterations);
    const std::string at = "iteration-done events for --nccl-timeout";
    for (auto& ctx : devices_) {
      SL_CUDA(cudaSetDevice(ctx.ordinal), at);
      ctx.iteration_done.resize(static_cast<size_t>(std::min(total, kIterationDoneEvents)));
      for (auto& ev : ctx.iteration_done) SL_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), at);
    }
  }
  return ok_status();
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
        const hlo::Shape& leaf = *leaves[l];
        const auto parameter = static_cast<int64_t>(p);
        ParameterInit init{.random = options.init == InitMode::kRandom,
                           .random_start = random_stream_start(options.seed, device, parameter),
                           .fraction_bits = random_fraction_bits(leaf.type),
                           .device = device,
                           .parameter = parameter};
        SL_CUDA(static_cast<cudaError_t>(launch_init_parameter(ctx.at(slices[l]), static_cast<int>(leaf.type),
                                                               leaf.element_count(), init, nullptr)),
                fmt::format("initialising parameter {} on device {}", p, device));
      }
    }
    for (const sched::ConstantBuffer& c : program.buffers.constants) {
      if (c.slice.offset < 0 || !c.instruction->shape.is_array()) continue;
      Literal lit{c.instruction->shape, c.instruction->literal};
      auto bytes = encode_literal(lit);
      SL_CUDA(cudaMemcpy(ctx.at(c.slice), bytes.data(), bytes.size(), cudaMemcpyHostToDevice),
              fmt::format("constant '{}' on device {}", c.instruction->name, device));
    }
  }
  return ok_status();
}

void CudaBackend::teardown() {
  for (DeviceContext& ctx : devices_) ctx.fusions = nullptr;
  fusions_.reset();
  comms_.reset();
  rendezvous_.reset();
  for (DeviceContext& ctx : devices_) {
    cudaSetDevice(ctx.ordinal);
    cudaDeviceSynchronize();
    destroy_graphs(ctx);
    for (auto& [s, cs] : ctx.streams) cudaStreamDestroy(cs);
    for (cudaEvent_t ev : ctx.events) if (ev) cudaEventDestroy(ev);
    for (auto& [s, ev] : ctx.join_events) if (ev) cudaEventDestroy(ev);
    if (ctx.boundary_event) cudaEventDestroy(ctx.boundary_event);
    for (cudaEvent_t ev : ctx.iteration_done)
      if (ev) cudaEventDestroy(ev);
    ctx.gemm.reset();
    if (ctx.fallback_workspace) cudaFree(ctx.fallback_workspace);
    if (ctx.arena) cudaFree(ctx.arena);
    if (ctx.scratch) cudaFree(ctx.scratch);
  }
  devices_.clear();
}

}  // namespace sl::exec::cuda
