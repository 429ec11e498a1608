#include "core/exec/stall_watch.h"

#include <utility>

namespace sl::exec {

StallWatch::StallWatch(std::chrono::milliseconds timeout, std::function<int64_t()> progress,
                       std::function<void()> stalled, std::chrono::milliseconds poll)
    : timeout_(timeout),
      poll_(poll),
      progress_(std::move(progress)),
      stalled_(std::move(stalled)),
      thread_([this] { loop(); }) {}

StallWatch::~StallWatch() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

bool StallWatch::fired() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fired_;
}

void StallWatch::loop() {
  using Clock = std::chrono::steady_clock;
  int64_t last = progress_();
  Clock::time_point moved = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, poll_, [this] { return stop_; })) {
    lock.unlock();
    const int64_t now = progress_();
    const Clock::time_point t = Clock::now();
    if (now != last) {
      last = now;
      moved = t;
    }
    const bool stalled = t - moved >= timeout_;
    if (stalled) stalled_();
    lock.lock();
    if (stalled) {
      fired_ = true;
      return;  // one abort is enough
    }
  }
}

}  // namespace sl::exec
