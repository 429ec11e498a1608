#pragma once
// Stops a run whose devices have stopped making progress. NCCL never times
// out: a rank that hangs while its process stays alive (stuck before a
// collective, say) leaves its peers' collective kernels waiting on the GPU
// forever, and PeerWatch only notices ranks whose connection closes. torch
// answers this with its NCCL watchdog (10 minutes by default); this is ours:
// the cuda backend's progress is the iterations its devices have issued and
// finished, and on a stall it aborts the communicators.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace sl::exec {

class StallWatch {
 public:
  // `progress()` returns a count that grows while the run moves; it is called
  // on the watch's thread every `poll`. `stalled()` runs once, on that
  // thread, when the count has not grown for `timeout`.
  StallWatch(std::chrono::milliseconds timeout, std::function<int64_t()> progress,
             std::function<void()> stalled, std::chrono::milliseconds poll = std::chrono::milliseconds(100));
  ~StallWatch();  // stops watching and joins the thread
  StallWatch(const StallWatch&) = delete;
  StallWatch& operator=(const StallWatch&) = delete;

  bool fired() const;

 private:
  void loop();

  const std::chrono::milliseconds timeout_;
  const std::chrono::milliseconds poll_;
  std::function<int64_t()> progress_;
  std::function<void()> stalled_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool fired_ = false;
  std::thread thread_;
};

}  // namespace sl::exec
