#pragma once
// The NCCL communicators of a run: one per replica group, created once
// (every device from one process, or this process's device with ids from rank
// 0's rendezvous), and what lets a device that fails stop the others instead
// of leaving them waiting for it.
//
// A device thread that fails before a collective leaves its peer's
// collective kernel waiting on the GPU for it, and, while the ranks are not
// connected yet, its peer's thread blocked inside the NCCL call (NCCL
// connects ranks lazily; reproduced on 2 x H200, NCCL 2.28). So:
// - ranks connect when the communicators are made: NCCL_RUNTIME_CONNECT=0
//   unless the user set it, and one byte each way between every pair of
//   devices a collective-permute joins (sends connect lazily regardless);
// - abort_all(), from the failing thread, aborts every communicator:
//   kernels waiting for the failed peer exit, later calls fail at once.
// Where GEMMs leave SMs to NCCL, the communicators launch one CTA a cluster
// (CommOptions), so their kernels fit on those SMs.
// Nonblocking communicators (ncclConfig_t.blocking = 0), NCCL's own answer,
// were tried: NCCL 2.28 then launches every collective from a thread of its
// own, which costs a thread per call and hides the launch from the tracer's
// per-thread correlation (no NCCL kernel was attributed on 2 x H200).

#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/dist/rendezvous.h"
#include "core/sched/lowering.h"

namespace sl::exec::cuda {

// An NCCL result and the call that returned it, for the error message.
struct NcclResult {
  ncclResult_t result = ncclSuccess;
  const char* call = "";
};

struct CommOptions {
  // NCCL kernels launched one CTA a cluster (cgaClusterSize = 1), so they fit
  // on the SMs GEMMs leave them (RunOptions::comm_sms > 0). False: NCCL's
  // default (clusters of 4 on Hopper). NCCL_CGA_CLUSTER_SIZE, if set, wins.
  bool single_cta_clusters = false;
};

class NcclComms {
 public:
  // Creates a communicator for every distinct group of the program's
  // collectives (and the world group for collective-permute peers).
  // Single process: program device g is CUDA device g.
  static Result<std::unique_ptr<NcclComms>> create(const sched::LoweredProgram& program, const CommOptions& options);
  // One process per device: this process holds program device `device` on
  // CUDA device `ordinal`; rank 0 makes the unique ids and broadcasts them.
  static Result<std::unique_ptr<NcclComms>> create_for_rank(const sched::LoweredProgram& program,
                                                            const CommOptions& options, dist::Rendezvous& rendezvous,
                                                            int64_t device, int ordinal);
  // Destroys the communicators that were not aborted.
  ~NcclComms();
  NcclComms(const NcclComms&) = delete;
  NcclComms& operator=(const NcclComms&) = delete;

  // Communicator of `device` in `group` (global device ids), null if none.
  ncclComm_t get(std::span<const int64_t> group, int64_t device) const;

  // Runs `enqueue` (NCCL calls on `comm`, a group start to end) unless
  // abort_all() ran, in which case it fails without touching NCCL.
  Status call(ncclComm_t comm, const std::function<NcclResult()>& enqueue, const std::string& at);

  // Aborts every communicator (idempotent, any thread): later call()s fail
  // with a message naming `why`, and collective kernels waiting on the GPU
  // exit. A communicator whose thread is stuck inside NCCL for longer than
  // a few seconds is left alone (aborting it under that thread would free
  // what the thread still uses); returns how many were left.
  size_t abort_all(const std::string& why);
  bool aborted() const { return abort_requested_.load(std::memory_order_acquire); }
  // abort_all's `why`; empty while not aborted.
  std::string abort_reason() const { return aborted() ? abort_reason_ : std::string(); }

 private:
  // Orders groups by their ids; transparent, so a thunk's span finds its
  // group without a copy.
  struct GroupLess {
    using is_transparent = void;
    bool operator()(std::span<const int64_t> a, std::span<const int64_t> b) const {
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
    }
  };
  NcclComms() = default;
  void add(const std::vector<int64_t>& group, std::vector<ncclComm_t> comms);
  // One byte each way between the devices (of `local`, on their CUDA
  // `ordinals`) that the program's collective-permutes pair up.
  Status connect_peers(const sched::LoweredProgram& program, std::span<const int64_t> local,
                       std::span<const int> ordinals);

  std::map<std::vector<int64_t>, std::vector<ncclComm_t>, GroupLess> comms_;
  // One lock per communicator, held by its device's thread for each NCCL
  // call and by abort_all: no communicator is aborted under a call. Timed,
  // so abort_all can give up on a thread stuck inside NCCL.
  std::map<ncclComm_t, std::unique_ptr<std::timed_mutex>> locks_;
  std::mutex abort_mutex_;
  std::atomic<bool> abort_requested_{false};
  std::string abort_reason_;  // written before abort_requested_ is set
};

}  // namespace sl::exec::cuda
