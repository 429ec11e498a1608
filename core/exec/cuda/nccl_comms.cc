#include "core/exec/cuda/nccl_comms.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numeric>
#include <set>

#include "core/exec/cuda/cuda_check.h"

namespace sl::exec::cuda {

using hlo::Opcode;

namespace {

// Every distinct group of the program's collectives (and the world group for
// collective-permute peers), in one order that every process agrees on.
std::set<std::vector<int64_t>> communicator_groups(const sched::LoweredProgram& program) {
  std::set<std::vector<int64_t>> groups;
  for (const sched::DeviceProgram& d : program.devices) {
    for (const sched::Thunk& t : d.thunks) {
      if (t.kind != sched::ThunkKind::kCollective) continue;
      if (!t.collective.group.empty()) groups.emplace(t.collective.group.begin(), t.collective.group.end());
      if (t.collective.op == Opcode::kCollectivePermute) {
        std::vector<int64_t> world(program.devices.size());
        std::iota(world.begin(), world.end(), 0);
        groups.insert(world);
      }
    }
  }
  return groups;
}

// Ranks connect when the communicators are made, not inside the first
// collective (which would wait there for a peer that may have failed). The
// user's own setting wins. Once per process: setenv races with getenv.
void connect_at_init() {
  static std::once_flag once;
  std::call_once(once, [] { setenv("NCCL_RUNTIME_CONNECT", "0", /*overwrite=*/0); });
}

// NCCL launches its kernels as clusters of 4 CTAs on Hopper by default.
// Beside a GEMM that left it SMs (--comm-sms), such clusters often found no
// room: collectives ran up to 1.6x slower than alone, most when the GEMM had
// started first. With one CTA a cluster they ran within 10% of their time
// alone, and fsdp_bucketed's iteration went from 1034 to 847 us (2 x H200,
// bench/RESULTS.md, sixth session).
ncclConfig_t comm_config(const CommOptions& options) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (options.single_cta_clusters && std::getenv("NCCL_CGA_CLUSTER_SIZE") == nullptr) config.cgaClusterSize = 1;
  return config;
}

// An NCCL error with NCCL's own last message, which names the cause.
Status nccl_error(ncclResult_t result, const char* call, const std::string& at, ncclComm_t comm) {
  Status s = nccl_status(result, call, at);
  const char* last = ncclGetLastError(comm);
  if (last == nullptr || *last == '\0') return s;
  return runtime_error(s.message() + " (" + last + ")");
}

// How long abort_all waits for a thread to leave its NCCL call.
constexpr auto kAbortLockWait = std::chrono::seconds(3);

}  // namespace

Result<std::unique_ptr<NcclComms>> NcclComms::create(const sched::LoweredProgram& program,
                                                     const CommOptions& options) {
  connect_at_init();
  std::unique_ptr<NcclComms> out(new NcclComms());
  for (const auto& g : communicator_groups(program)) {
    const std::string what = fmt::format("group of {} devices", g.size());
    ncclUniqueId id;
    SL_NCCL(ncclGetUniqueId(&id), what);
    std::vector<ncclComm_t> comms(g.size(), nullptr);
    ncclConfig_t config = comm_config(options);
    // Every rank from this thread, in one group (as ncclCommInitAll does).
    SL_NCCL(ncclGroupStart(), what);
    for (size_t r = 0; r < g.size(); ++r) {
      Status set = cuda_status(cudaSetDevice(static_cast<int>(g[r])), "cudaSetDevice", what);
      ncclResult_t res = set.is_ok() ? ncclCommInitRankConfig(&comms[r], static_cast<int>(g.size()), id,
                                                              static_cast<int>(r), &config)
                                     : ncclSuccess;
      if (!set.is_ok() || res != ncclSuccess) {
        (void)ncclGroupEnd();
        return set.is_ok() ? nccl_status(res, "ncclCommInitRankConfig", what) : set;
      }
    }
    SL_NCCL(ncclGroupEnd(), what);
    out->add(g, std::move(comms));
  }
  std::vector<int64_t> local(program.devices.size());
  std::iota(local.begin(), local.end(), 0);
  std::vector<int> ordinals(local.begin(), local.end());
  SL_RETURN_IF_ERROR(out->connect_peers(program, local, ordinals));
  return out;
}

Result<std::unique_ptr<NcclComms>> NcclComms::create_for_rank(const sched::LoweredProgram& program,
                                                              const CommOptions& options,
                                                              dist::Rendezvous& rendezvous, int64_t device,
                                                              int ordinal) {
  connect_at_init();
  const auto groups = communicator_groups(program);
  std::string ids;
  if (rendezvous.rank() == 0) {
    for (size_t i = 0; i < groups.size(); ++i) {
      ncclUniqueId id;
      SL_NCCL(ncclGetUniqueId(&id), "making NCCL ids on rank 0");
      ids.append(id.internal, sizeof(id.internal));
    }
  }
  SL_ASSIGN_OR_RETURN(ids, rendezvous.broadcast(ids));
  if (ids.size() != groups.size() * sizeof(ncclUniqueId::internal)) {
    return runtime_error(fmt::format("rank {} got {} bytes of NCCL ids from rank 0, expected {} ({} groups)",
                                     rendezvous.rank(), ids.size(), groups.size() * sizeof(ncclUniqueId::internal),
                                     groups.size()));
  }
  std::unique_ptr<NcclComms> out(new NcclComms());
  SL_CUDA(cudaSetDevice(ordinal), "");
  // Blocking inits in the same group order on every process cannot deadlock.
  size_t index = 0;
  for (const auto& g : groups) {
    ncclUniqueId id;
    std::memcpy(id.internal, ids.data() + index++ * sizeof(id.internal), sizeof(id.internal));
    auto pos = std::find(g.begin(), g.end(), device);
    if (pos == g.end()) continue;
    std::vector<ncclComm_t> comms(g.size(), nullptr);
    const auto rank = static_cast<int>(pos - g.begin());
    ncclConfig_t config = comm_config(options);
    SL_NCCL(ncclCommInitRankConfig(&comms[static_cast<size_t>(rank)], static_cast<int>(g.size()), id, rank, &config),
            fmt::format("device {} joining its group of {} devices as rank {}", device, g.size(), rank));
    out->add(g, std::move(comms));
  }
  const int64_t local[] = {device};
  const int ordinals[] = {ordinal};
  SL_RETURN_IF_ERROR(out->connect_peers(program, local, ordinals));
  return out;
}

void NcclComms::add(const std::vector<int64_t>& group, std::vector<ncclComm_t> comms) {
  for (ncclComm_t c : comms) {
    if (c != nullptr) locks_.emplace(c, std::make_unique<std::timed_mutex>());
  }
  comms_.emplace(group, std::move(comms));
}

Status NcclComms::connect_peers(const sched::LoweredProgram& program, std::span<const int64_t> local,
                                std::span<const int> ordinals) {
  std::map<int64_t, std::set<int64_t>> sends, receives;  // device -> peers
  for (int64_t d : local) {
    for (const sched::Thunk& t : program.devices.at(static_cast<size_t>(d)).thunks) {
      if (t.kind != sched::ThunkKind::kCollective || t.collective.op != Opcode::kCollectivePermute) continue;
      if (t.collective.send_to >= 0 && t.collective.send_to != d) sends[d].insert(t.collective.send_to);
      if (t.collective.recv_from >= 0 && t.collective.recv_from != d) receives[d].insert(t.collective.recv_from);
    }
  }
  if (sends.empty() && receives.empty()) return ok_status();
  std::vector<int64_t> world(program.devices.size());
  std::iota(world.begin(), world.end(), 0);
  const std::string at = "connecting the devices that collective-permutes pair up";
  struct Scratch { int ordinal; void* bytes = nullptr; cudaStream_t stream = nullptr; };
  std::vector<Scratch> scratch;
  struct Release {
    std::vector<Scratch>& s;
    ~Release() {
      for (Scratch& x : s) {
        cudaSetDevice(x.ordinal);
        if (x.stream) cudaStreamDestroy(x.stream);
        if (x.bytes) cudaFree(x.bytes);
      }
    }
  } release{scratch};
  for (size_t i = 0; i < local.size(); ++i) {
    scratch.push_back({ordinals[i]});
    SL_CUDA(cudaSetDevice(ordinals[i]), at);
    SL_CUDA(cudaMalloc(&scratch.back().bytes, 2), at);
    SL_CUDA(cudaStreamCreateWithFlags(&scratch.back().stream, cudaStreamNonBlocking), at);
  }
  // One group from this thread for all local devices: blocking calls for
  // several ranks cannot wait for each other.
  SL_NCCL(ncclGroupStart(), at);
  for (size_t i = 0; i < local.size(); ++i) {
    ncclComm_t comm = get(world, local[i]);
    auto* bytes = static_cast<char*>(scratch[i].bytes);
    for (int64_t peer : sends[local[i]]) {
      if (ncclResult_t r = ncclSend(bytes, 1, ncclUint8, static_cast<int>(peer), comm, scratch[i].stream);
          r != ncclSuccess) {
        (void)ncclGroupEnd();
        return nccl_status(r, "ncclSend", at);
      }
    }
    for (int64_t peer : receives[local[i]]) {
      if (ncclResult_t r = ncclRecv(bytes + 1, 1, ncclUint8, static_cast<int>(peer), comm, scratch[i].stream);
          r != ncclSuccess) {
        (void)ncclGroupEnd();
        return nccl_status(r, "ncclRecv", at);
      }
    }
  }
  SL_NCCL(ncclGroupEnd(), at);
  for (const Scratch& x : scratch) {
    SL_CUDA(cudaSetDevice(x.ordinal), at);
    SL_CUDA(cudaStreamSynchronize(x.stream), at);
  }
  return ok_status();
}

NcclComms::~NcclComms() {
  for (auto& [g, comms] : comms_) {
    for (ncclComm_t c : comms) {
      if (c) ncclCommDestroy(c);
    }
  }
}

ncclComm_t NcclComms::get(std::span<const int64_t> group, int64_t device) const {
  auto it = comms_.find(group);
  if (it == comms_.end()) return nullptr;
  auto pos = std::find(group.begin(), group.end(), device);
  if (pos == group.end()) return nullptr;
  return it->second[static_cast<size_t>(pos - group.begin())];
}

Status NcclComms::call(ncclComm_t comm, const std::function<NcclResult()>& enqueue, const std::string& at) {
  auto lock = locks_.find(comm);
  if (lock == locks_.end()) return runtime_error(fmt::format("{}: unknown NCCL communicator", at));
  std::lock_guard<std::timed_mutex> guard(*lock->second);
  if (abort_requested_.load(std::memory_order_acquire)) {
    return runtime_error(fmt::format("{}: NCCL stopped: {}", at, abort_reason_));
  }
  NcclResult r = enqueue();
  if (r.result != ncclSuccess) return nccl_error(r.result, r.call, at, comm);
  return ok_status();
}

size_t NcclComms::abort_all(const std::string& why) {
  std::lock_guard<std::mutex> once(abort_mutex_);
  if (abort_requested_.load(std::memory_order_relaxed)) return 0;
  abort_reason_ = why;
  abort_requested_.store(true, std::memory_order_release);
  size_t left = 0;
  for (auto& [g, comms] : comms_) {
    for (ncclComm_t& c : comms) {
      if (c == nullptr) continue;
      std::timed_mutex& lock = *locks_.at(c);
      if (!lock.try_lock_for(kAbortLockWait)) {
        ++left;
        continue;
      }
      (void)ncclCommAbort(c);
      c = nullptr;
      lock.unlock();
    }
  }
  return left;
}

}  // namespace sl::exec::cuda
