#include "app/common/interrupt_guard.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "core/trace/store/trace_store.h"

namespace sl::app {
namespace {

// The watcher wakes for these; SIGUSR2 only asks it to stop.
sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR2);
  return set;
}

}  // namespace

InterruptGuard::InterruptGuard(std::string db_path) : db_path_(std::move(db_path)) {
  sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
  watcher_ = std::thread([this] { watch(); });
}

InterruptGuard::~InterruptGuard() {
  stopping_ = true;
  pthread_kill(watcher_.native_handle(), SIGUSR2);
  watcher_.join();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

void InterruptGuard::set_run(int64_t run_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  run_id_ = run_id;
}

void InterruptGuard::watch() {
  sigset_t set = watched_signals();
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGUSR2) {
      if (stopping_) return;
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (run_id_ > 0) {
      // A connection of its own: the main thread's may be mid-transaction
      // (this one waits for it, up to the busy timeout).
      auto store = trace::TraceStore::open(db_path_, trace::TraceStore::Mode::kOpenExisting);
      Status marked = store ? (*store)->finish_run(run_id_, trace::RunStatus::kInterrupted, 0,
                                                   {{"interrupted_by_signal", sig, strsignal(sig)}})
                            : store.status();
      if (marked.is_ok()) {
        std::fprintf(stderr, "streamlens: %s: run %lld marked interrupted\n", strsignal(sig),
                     static_cast<long long>(run_id_));
      } else {
        std::fprintf(stderr, "streamlens: %s: could not mark run %lld interrupted: %s\n", strsignal(sig),
                     static_cast<long long>(run_id_), marked.message().c_str());
      }
    }
    std::fflush(stderr);
    _exit(128 + sig);
  }
}

std::string process_host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

}  // namespace sl::app
