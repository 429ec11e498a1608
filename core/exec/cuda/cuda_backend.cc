#include "core/exec/cuda/cuda_backend.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <thread>

#include "core/dist/peer_watch.h"
#include "core/dist/rendezvous.h"
#include "core/exec/cuda/background_flush.h"
#include "core/exec/cuda/cuda_check.h"
#include "core/exec/cuda/device_context.h"
#include "core/exec/cuda/host_convert.h"
#include "core/exec/cuda/kernels.h"
#include "core/exec/cuda/nccl_collectives.h"
#include "core/exec/cuda/nccl_comms.h"
#include "core/exec/event_kind.h"
#include "core/exec/stall_watch.h"
#include "cupti_tracer/collector.h"
#include "cupti_tracer/cupti_api.h"

namespace sl::exec {

using cuda::BackgroundFlush;
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

std::string cuda_device_name(int ordinal) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, ordinal) != cudaSuccess) return "cuda";
  return prop.name;
}

namespace {

// Iterations of a few milliseconds need no flush of their own (see
// background_flush.h); long ones (training steps) get one each.
constexpr std::chrono::milliseconds kMinFlushInterval{200};

constexpr size_t kFallbackWorkspaceBytes = size_t{32} << 20;

// Iteration-done events per device, reused in turn (DeviceContext::
// iteration_done). The host stays fewer iterations than this ahead of the
// GPU (CUDA's launch queue holds about a thousand launches, and an iteration
// takes two at least), so an event is not recorded again before it
// completes; if it were, the watch would only see that progress later.
constexpr int kIterationDoneEvents = 1024;

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
  explicit CudaBackend(CudaOptions options)
      : options_(options),
        fail_at_(injected_fault("SL_CUDA_FAIL_THUNK")),
        hang_at_(injected_fault("SL_CUDA_HANG_THUNK")) {}
  std::string name() const override { return "cuda"; }
  Result<RunOutput> run(const sched::LoweredProgram& program, const RunOptions& options) override;

 private:
  Status setup(const sched::LoweredProgram& program, const RunOptions& options);
  Status init_memory(const sched::LoweredProgram& program, const RunOptions& options);
  Status issue(DeviceContext& ctx, int iteration, bool keep, bool tagged, cupti::ActivityCollector* collector);
  // What one device's thread issues: warm-up then recorded iterations. The
  // first `tagged` push external ids (CUPTI's API records are on); after
  // them `tagging_done` runs once (the last device turns API records off).
  struct IterationPlan {
    int warmup = 0;
    int recorded = 1;
    int tagged = 1;
    std::function<void()> tagging_done;
    std::atomic<int>* issued = nullptr;  // iterations whose iteration_done event is recorded
  };
  Status run_iterations(DeviceContext& ctx, const IterationPlan& plan, cupti::ActivityCollector* collector,
                        BackgroundFlush* flush, const std::function<void(int64_t, int64_t)>& progress);
  void teardown();

  // Program devices this process runs: all of them, or its rank's one.
  std::vector<int64_t> local_devices(const sched::LoweredProgram& program) const;
  // Multi-process: all ranks meet, rank 0 reads the tracer clock, and every
  // rank counts its trace from that instant.
  Status agree_on_time_origin(cupti::ActivityCollector* collector);

  // SL_CUDA_FAIL_THUNK=DEVICE:INDEX: issuing thunk INDEX of program device
  // DEVICE fails, as a CUDA error there would. SL_CUDA_HANG_THUNK=DEVICE:INDEX:
  // that device's thread stops there instead, as a hung rank would, until
  // NCCL is stopped. For reproducing what a failure or a hang on one device
  // does to the run (GPU tests *PeerWaiting*, *Hung*); unset in normal use.
  struct InjectedFault {
    int64_t device = -1;
    size_t thunk = 0;
  };
  static std::optional<InjectedFault> injected_fault(const char* variable);
  // Polls the run's progress (iterations issued and finished on every device)
  // for the stall watch; only the watch's thread calls it.
  int64_t progress(std::span<const std::atomic<int>> issued, std::vector<int>& finished) const;

  CudaOptions options_;
  std::optional<InjectedFault> fail_at_;
  std::optional<InjectedFault> hang_at_;
  std::vector<DeviceContext> devices_;
  std::unique_ptr<cuda::NcclComms> comms_;
  std::unique_ptr<dist::Rendezvous> rendezvous_;
};

std::optional<CudaBackend::InjectedFault> CudaBackend::injected_fault(const char* variable) {
  const char* env = std::getenv(variable);
  if (env == nullptr) return std::nullopt;
  InjectedFault f;
  unsigned long long thunk = 0;
  long long device = -1;
  if (std::sscanf(env, "%lld:%llu", &device, &thunk) != 2) return std::nullopt;
  f.device = device;
  f.thunk = static_cast<size_t>(thunk);
  return f;
}

int64_t CudaBackend::progress(std::span<const std::atomic<int>> issued, std::vector<int>& finished) const {
  int64_t total = 0;
  for (size_t d = 0; d < devices_.size(); ++d) {
    const std::vector<cudaEvent_t>& done = devices_[d].iteration_done;
    const int recorded = issued[d].load(std::memory_order_acquire);
    // An event never recorded reads as done: query only recorded ones.
    while (finished[d] < recorded &&
           cudaEventQuery(done[static_cast<size_t>(finished[d]) % done.size()]) == cudaSuccess) {
      ++finished[d];
    }
    total += recorded + finished[d];
  }
  return total;
}

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
  if (!rendezvous_) return Status::ok();
  SL_RETURN_IF_ERROR(rendezvous_->barrier());
  std::string origin;
  if (rendezvous_->rank() == 0 && collector != nullptr) {
    SL_ASSIGN_OR_RETURN(uint64_t now, cupti::CuptiApi::timestamp());
    origin = std::to_string(now);
  }
  SL_ASSIGN_OR_RETURN(origin, rendezvous_->broadcast(origin));
  if (collector != nullptr && !origin.empty()) collector->set_time_origin(std::stoull(origin));
  return Status::ok();
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
  for (size_t i = 0; i < local.size(); ++i) {
    const int64_t d = local[i];
    DeviceContext& ctx = devices_[i];
    const sched::DeviceProgram& dp = program.devices[static_cast<size_t>(d)];
    ctx.ordinal = options_.dist ? options_.dist->local_rank : static_cast<int>(d);
    ctx.program = &dp;
    ctx.module = program.module;
    ctx.allow_tf32 = options.allow_tf32;
    ctx.comm_sms = options.comm_sms;
    ctx.world_size = n;
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
    SL_ASSIGN_OR_RETURN(ctx.gemm, cuda::GemmRunner::create());
    SL_CUDA(cudaMalloc(&ctx.fallback_workspace, kFallbackWorkspaceBytes), at);
    ctx.fallback_workspace_bytes = kFallbackWorkspaceBytes;
  }
  bool any_collective = false;
  for (const auto& dp : program.devices) {
    for (const Thunk& t : dp.thunks) any_collective |= t.kind == ThunkKind::kCollective;
  }
  if (any_collective) {
    const cuda::CommOptions comm_options{.single_cta_clusters = options.comm_sms > 0};
    if (rendezvous_) {
      SL_ASSIGN_OR_RETURN(comms_, cuda::NcclComms::create_for_rank(program, comm_options, *rendezvous_, local[0],
                                                                   devices_[0].ordinal));
    } else {
      SL_ASSIGN_OR_RETURN(comms_, cuda::NcclComms::create(program, comm_options));
    }
    for (auto& ctx : devices_) ctx.comms = comms_.get();
    if (options.nccl_timeout_s > 0) {
      const int total = std::max(0, options.warmup) + std::max(1, options.iterations);
      const std::string at = "iteration-done events for --nccl-timeout";
      for (auto& ctx : devices_) {
        SL_CUDA(cudaSetDevice(ctx.ordinal), at);
        ctx.iteration_done.resize(static_cast<size_t>(std::min(total, kIterationDoneEvents)));
        for (auto& ev : ctx.iteration_done)
          SL_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), at);
      }
    }
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
        const hlo::Shape& leaf = *leaves[l];
        const auto parameter = static_cast<int64_t>(p);
        cuda::ParameterInit init{.random = options.init == InitMode::kRandom,
                                 .random_start = random_stream_start(options.seed, device, parameter),
                                 .fraction_bits = random_fraction_bits(leaf.type),
                                 .device = device,
                                 .parameter = parameter};
        SL_CUDA(static_cast<cudaError_t>(cuda::launch_init_parameter(ctx.at(slices[l]), static_cast<int>(leaf.type),
                                                                     leaf.element_count(), init, nullptr)),
                fmt::format("initialising parameter {} on device {}", p, device));
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
Status CudaBackend::issue(DeviceContext& ctx, int iteration, bool keep, bool tagged,
                          cupti::ActivityCollector* collector) {
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
    if (fail_at_ && fail_at_->device == dp.device && fail_at_->thunk == i) {
      return runtime_error(fmt::format("{}: injected failure (SL_CUDA_FAIL_THUNK)", where(t, ctx)));
    }
    if (hang_at_ && hang_at_->device == dp.device && hang_at_->thunk == i) {
      while (comms_ != nullptr && !comms_->aborted())
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      return runtime_error(fmt::format("{}: injected hang (SL_CUDA_HANG_THUNK), stopped: {}", where(t, ctx),
                                       comms_ ? comms_->abort_reason() : "no NCCL to stop"));
    }
    const uint64_t ext = external_id(iteration, dp.device, i);
    if (collector != nullptr) {
      collector->register_launch(ext, {.device = static_cast<int32_t>(dp.device), .stream = t.stream,
                                       .kind = kind_of(t), .instruction = t.attributed_name,
                                       .flops = t.flops,
                                       .bytes = t.bytes_accessed, .iteration = iteration, .keep = keep,
                                       .correlation = static_cast<int64_t>(i) + 1, .tagged = tagged});
      for (uint64_t from : pending_waits[t.stream]) collector->add_wait_edge(from, ext);
    }
    pending_waits[t.stream].clear();
    last_on_stream[t.stream] = ext;
    cupti::ExternalIdScope scope(ext, collector != nullptr && tagged);
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

// All iterations of one device, queued without a host synchronization in
// between (as a training loop runs): a host sync per iteration would start
// every iteration with the skew between the devices' host threads, which the
// first collective then waits out. Iterations stay apart on the GPU: each
// ends with every stream joined into the main stream, and the next starts
// with every stream waiting for that join.
Status CudaBackend::run_iterations(DeviceContext& ctx, const IterationPlan& plan,
                                   cupti::ActivityCollector* collector, BackgroundFlush* flush,
                                   const std::function<void(int64_t, int64_t)>& progress) {
  const int warmup = plan.warmup;
  const int total = warmup + plan.recorded;
  const std::string at = fmt::format("iteration boundary on device {}", ctx.program->device);
  if (collector != nullptr) {
    size_t launches = 0;
    for (const Thunk& t : ctx.program->thunks) {
      launches += t.kind != ThunkKind::kRecordEvent && t.kind != ThunkKind::kWaitEvent;
    }
    collector->reserve_launches(static_cast<int32_t>(ctx.program->device), launches * static_cast<size_t>(total));
  }
  for (int it = 0; it < total; ++it) {
    const bool keep = it >= warmup;
    if (it > 0) {
      for (auto& [s, cs] : ctx.streams) {
        if (s != sched::kMainStream) SL_CUDA(cudaStreamWaitEvent(cs, ctx.boundary_event, 0), at);
      }
    }
    SL_RETURN_IF_ERROR(issue(ctx, keep ? it - warmup : -1 - it, keep, it < plan.tagged, collector));
    if (it + 1 == plan.tagged && plan.tagging_done) plan.tagging_done();
    for (auto& [s, cs] : ctx.streams) {
      if (s == sched::kMainStream) continue;
      cudaEvent_t joined = ctx.join_events.at(s);
      SL_CUDA(cudaEventRecord(joined, cs), at);
      SL_CUDA(cudaStreamWaitEvent(ctx.stream(sched::kMainStream), joined, 0), at);
    }
    SL_CUDA(cudaEventRecord(ctx.boundary_event, ctx.stream(sched::kMainStream)), at);
    if (!ctx.iteration_done.empty()) {
      SL_CUDA(cudaEventRecord(ctx.iteration_done[static_cast<size_t>(it) % ctx.iteration_done.size()],
                              ctx.stream(sched::kMainStream)),
              at);
      if (plan.issued != nullptr) plan.issued->store(it + 1, std::memory_order_release);
    }
    // Completed CUPTI buffers go to the collector as the run goes (the last,
    // partly filled one at the forced flush after the run), off this thread
    // and at most every kMinFlushInterval.
    if (flush != nullptr && ctx.ordinal == devices_.front().ordinal) flush->request();
    if (progress) progress(it + 1, total);
  }
  return Status::ok();
}

void CudaBackend::teardown() {
  comms_.reset();
  rendezvous_.reset();
  for (DeviceContext& ctx : devices_) {
    cudaSetDevice(ctx.ordinal);
    cudaDeviceSynchronize();
    for (auto& [s, cs] : ctx.streams) cudaStreamDestroy(cs);
    for (cudaEvent_t ev : ctx.events) if (ev) cudaEventDestroy(ev);
    for (auto& [s, ev] : ctx.join_events) if (ev) cudaEventDestroy(ev);
    if (ctx.boundary_event) cudaEventDestroy(ctx.boundary_event);
    for (cudaEvent_t ev : ctx.iteration_done)
      if (ev) cudaEventDestroy(ev);
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

  SL_RETURN_IF_ERROR(agree_on_time_origin(collector.get()));

  const int warmup = std::max(0, options.warmup);
  const int iterations = std::max(1, options.iterations);
  std::vector<Status> statuses(devices_.size());
  std::optional<BackgroundFlush> flush;
  if (collector) flush.emplace(kMinFlushInterval);
  // Tagging every launch costs the launching threads CUPTI's API records
  // (+60-80% on 10,000 tiny kernels on an H200); the warm-up iterations (or
  // the first) teach the collector what each launch leaves on its stream, and
  // later ones are attributed by stream order. SL_CUPTI_TAG_ALL=1 tags all.
  const bool tag_all = cupti::tag_all_launches();
  std::atomic<size_t> still_tagging{devices_.size()};
  auto tagging_done = [&] {
    if (still_tagging.fetch_sub(1) == 1 && collector && !tag_all) (void)cupti::CuptiApi::set_api_records(false);
  };
  const auto iterations_start = std::chrono::steady_clock::now();
  std::atomic<int> first_failed{-1};
  // One process per device: a rank whose process ends (or whose run fails)
  // closes its rendezvous connection; stop this one's NCCL work then, which
  // would wait for that rank forever.
  std::optional<dist::PeerWatch> peer_watch;
  if (rendezvous_ && comms_) {
    peer_watch.emplace(rendezvous_->connections(), [this](int rank) {
      comms_->abort_all(fmt::format("rank {} stopped (its process ended or its run failed)", rank));
    });
  }
  // A rank or device that hangs (alive, but stuck before a collective) would
  // leave the others' collective kernels waiting forever: stop NCCL when no
  // device has issued or finished an iteration for nccl_timeout_s.
  std::vector<std::atomic<int>> issued(devices_.size());
  std::vector<int> finished(devices_.size(), 0);
  std::optional<StallWatch> stall_watch;
  if (comms_ && options.nccl_timeout_s > 0) {
    stall_watch.emplace(
        std::chrono::seconds(options.nccl_timeout_s), [&] { return progress(issued, finished); },
        [this, &options] {
          comms_->abort_all(
              fmt::format("no device issued or finished an iteration for {} s (--nccl-timeout): a "
                          "device or rank may be hung",
                          options.nccl_timeout_s));
        });
  }
  std::vector<std::thread> threads;
  for (size_t d = 0; d < devices_.size(); ++d) {
    threads.emplace_back([&, d] {
      bool done = false;
      IterationPlan plan{.warmup = warmup,
                         .recorded = iterations,
                         .tagged = tag_all ? warmup + iterations : std::max(1, warmup),
                         .tagging_done =
                             [&] {
                               done = true;
                               tagging_done();
                             },
                         .issued = &issued[d]};
      statuses[d] = run_iterations(devices_[d], plan, collector.get(), flush ? &*flush : nullptr,
                                   d == 0 ? options.progress : nullptr);
      if (!done) tagging_done();  // failed early: do not keep the others' API records on
      if (!statuses[d].is_ok()) {
        int none = -1;
        first_failed.compare_exchange_strong(none, static_cast<int>(d));
        // The other devices may wait in a collective for this one: stop them.
        if (comms_) comms_->abort_all(fmt::format("device {} failed", devices_[d].program->device));
      }
    });
  }
  for (auto& th : threads) th.join();
  // The first failure is the cause; the others' are NCCL stopping for it.
  if (first_failed >= 0) return statuses[static_cast<size_t>(first_failed.load())];
  if (flush) {
    Status flushed = flush->status();
    flush.reset();
    SL_RETURN_IF_ERROR(flushed);
  }
  for (DeviceContext& ctx : devices_) {
    SL_CUDA(cudaSetDevice(ctx.ordinal), "");
    const cudaError_t synced = cudaDeviceSynchronize();
    if (comms_ && comms_->aborted()) break;  // why NCCL stopped says more than the error of its kernels
    SL_RETURN_IF_ERROR(cuda::cuda_status(
        synced, "cudaDeviceSynchronize()",
        fmt::format("running {} iterations on device {}", warmup + iterations, ctx.program->device)));
  }
  peer_watch.reset();
  stall_watch.reset();
  if (comms_ && comms_->aborted()) return runtime_error("NCCL stopped: " + comms_->abort_reason());
  // No rank closes its connection while another still runs (PeerWatch).
  if (rendezvous_) SL_RETURN_IF_ERROR(rendezvous_->barrier());

  RunOutput out;
  out.iterations_wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - iterations_start).count();
  if (collector) {
    SL_RETURN_IF_ERROR(cupti::CuptiApi::flush());
    out.trace = collector->build_trace();
    if (!rendezvous_) out.trace.normalize_time();  // ranks keep rank 0's origin
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
  cudaGetDeviceProperties(&prop, devices_.empty() ? 0 : devices_[0].ordinal);
  out.device_description = fmt::format("{} x{}", prop.name, devices_.size());
  if (options_.dist) {
    out.device_description += fmt::format(" (rank {} of {})", options_.dist->rank, options_.dist->world_size);
  }
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
