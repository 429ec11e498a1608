#include "core/exec/cuda/background_flush.h"

#include "cupti_tracer/cupti_api.h"

namespace sl::exec::cuda {

BackgroundFlush::BackgroundFlush(std::chrono::milliseconds min_interval)
    : min_interval_(min_interval), last_flush_(std::chrono::steady_clock::now()), thread_([this] { loop(); }) {}

BackgroundFlush::~BackgroundFlush() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void BackgroundFlush::request() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_flush_ < min_interval_) return;
    last_flush_ = now;
    requested_ = true;
  }
  wake_.notify_one();
}

Status BackgroundFlush::status() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

void BackgroundFlush::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return requested_ || stopping_; });
    if (!requested_) return;  // stopping, nothing pending
    requested_ = false;
    lock.unlock();
    Status flushed = cupti::CuptiApi::flush_completed();
    lock.lock();
    if (!flushed.is_ok() && status_.is_ok()) status_ = flushed;
  }
}

}  // namespace sl::exec::cuda
