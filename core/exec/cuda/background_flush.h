#pragma once
// Hands completed CUPTI buffers to the collector on a thread of its own, so
// that no device's launch thread stalls in CUPTI between iterations, and at
// most once per interval. Measured on 2 x H200 (bench/RESULTS.md): a flush on
// the launch thread after every iteration held that device back by 1-4 ms
// and its peer's collectives waited for it (64 x 1 MiB tuple all-gather
// 1.43 ms instead of 0.27); flushed on this thread after every iteration,
// CUPTI still stalled the launch threads now and then (fsdp_per_layer median
// iteration 1.68 ms instead of 1.34). CUPTI hands over full buffers itself.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/common/status.h"

namespace sl::exec::cuda {

class BackgroundFlush {
 public:
  explicit BackgroundFlush(std::chrono::milliseconds min_interval);
  ~BackgroundFlush();  // finishes a pending flush, then joins
  BackgroundFlush(const BackgroundFlush&) = delete;
  BackgroundFlush& operator=(const BackgroundFlush&) = delete;

  // Flush completed buffers soon, unless the last flush began less than the
  // interval ago. Never blocks on CUPTI.
  void request();
  Status status() const;  // the first failed flush, or ok

 private:
  void loop();

  const std::chrono::milliseconds min_interval_;
  std::chrono::steady_clock::time_point last_flush_{};  // none yet: the epoch
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool requested_ = false;
  bool stopping_ = false;
  Status status_;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace sl::exec::cuda
