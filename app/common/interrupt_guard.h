#pragma once
// SIGINT/SIGTERM while a run records (README.md, "What streamlens promises"): the run is marked
// `interrupted` in the database before the process exits, instead of staying
// `running` forever. (SIGKILL cannot be caught; readers recognise such runs
// by the pid and host stored in their config.)

#include <atomic>
#include <csignal>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace sl::app {

// Construct before any other thread starts (signals stay blocked in every
// thread created afterwards, and one watcher thread takes them).
class InterruptGuard {
 public:
  explicit InterruptGuard(std::string db_path);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // The run to mark on a signal; 0: none (a signal then just exits).
  void set_run(int64_t run_id);

 private:
  void watch();

  std::string db_path_;
  std::mutex mutex_;
  int64_t run_id_ = 0;
  std::atomic<bool> stopping_{false};
  sigset_t old_mask_{};
  std::thread watcher_;
};

// This machine's name, stored with the pid in a run's config ("pid", "host")
// so a reader can tell a dead recorder from a live one.
std::string process_host_name();

}  // namespace sl::app
