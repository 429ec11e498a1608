// The watchdogs that keep a multi-GPU run from waiting forever: a peer
// rank whose process ends (PeerWatch), and no device issuing or finishing an
// iteration for --nccl-timeout (StallWatch). Either stops NCCL; the run then
// fails with the reason.

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "core/exec/cuda/cuda_backend_impl.h"

namespace sl::exec::cuda {

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

void CudaBackend::start_watchdogs(const RunOptions& options, std::span<const std::atomic<int>> issued,
                                  std::vector<int>& finished, Watchdogs* out) {
  // One process per device: a rank whose process ends (or whose run fails)
  // closes its rendezvous connection; stop this one's NCCL work then, which
  // would wait for that rank forever.
  if (rendezvous_ && comms_) {
    out->peers.emplace(rendezvous_->connections(), [this](int rank) {
      comms_->abort_all(fmt::format("rank {} stopped (its process ended or its run failed)", rank));
    });
  }
  // A rank or device that hangs (alive, but stuck before a collective) would
  // leave the others' collective kernels waiting forever: stop NCCL when no
  // device has issued or finished an iteration for nccl_timeout_s.
  if (comms_ && options.nccl_timeout_s > 0) {
    const int timeout_s = options.nccl_timeout_s;
    out->stall.emplace(
        std::chrono::seconds(timeout_s), [this, issued, &finished] { return progress(issued, finished); },
        [this, timeout_s] {
          comms_->abort_all(
              fmt::format("no device issued or finished an iteration for {} s (--nccl-timeout): a "
                          "device or rank may be hung",
                          timeout_s));
        });
  }
}

}  // namespace sl::exec::cuda
