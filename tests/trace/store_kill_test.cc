// A run killed with SIGKILL mid-capture leaves the database openable, that run
// `running` with its events so far readable, and the other runs intact.
// Uses a real child process (store_writer_main.cc).

#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "core/trace/store/trace_store.h"
#include "tests/trace/trace_test_util.h"

namespace sl::trace {
namespace {

using testing::ScratchDir;
using testing::synthetic_trace;

TEST(StoreKillTest, KilledWriterLeavesRunningRunAndOtherRunsIntact) {
  ScratchDir dir;
  std::string path = dir.file("kill.db");
  Trace keep = synthetic_trace(3000);
  int64_t kept_run = 0;
  {
    auto store = TraceStore::open(path);
    ASSERT_TRUE(store.is_ok()) << store.status().message();
    RunInfo info;
    info.backend = "sim";
    auto id = (*store)->save_run(info, "HloModule kept", {}, keep);
    ASSERT_TRUE(id.is_ok());
    kept_run = *id;
  }

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    execl(SL_STORE_WRITER, SL_STORE_WRITER, path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }

  // Wait (up to 60 s: sanitizer builds are slow) until the victim has
  // committed several batches.
  auto reader = TraceStore::open(path, TraceStore::Mode::kReadOnly);
  ASSERT_TRUE(reader.is_ok()) << reader.status().message();
  int64_t victim = 0;
  int64_t seen = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    auto runs = (*reader)->list_runs();
    ASSERT_TRUE(runs.is_ok()) << runs.status().message();
    if (runs->size() == 2) {
      victim = (*runs)[1].id;
      seen = (*runs)[1].event_count;
      if (seen >= 5000) break;
    }
    int wstatus = 0;
    ASSERT_EQ(waitpid(child, &wstatus, WNOHANG), 0) << "writer exited early";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(seen, 5000) << "the writer made no progress";
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus));
  reader = Status(ErrorCode::kRuntime, "closed");

  // Reopen for writing (recovers the WAL), then check everything.
  auto store = TraceStore::open(path);
  ASSERT_TRUE(store.is_ok()) << store.status().message();
  auto info = (*store)->run_info(victim);
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->status, RunStatus::kRunning);
  EXPECT_GE(info->event_count, seen);
  EXPECT_EQ(info->event_count % 1000, 0);  // whole batches only
  auto trace = (*store)->load_trace(victim);
  ASSERT_TRUE(trace.is_ok()) << trace.status().message();
  EXPECT_EQ(static_cast<int64_t>(trace->events.size()), info->event_count);
  for (const Event& e : trace->events) {
    ASSERT_EQ(trace->name_of(e), "gemm_kernel");
    ASSERT_EQ(e.end_ns - e.start_ns, 90);
  }
  EXPECT_GE(trace->dependencies.size(), static_cast<size_t>(info->event_count / 1000 - 1));

  auto kept = (*store)->load_trace(kept_run);
  ASSERT_TRUE(kept.is_ok());
  EXPECT_EQ(kept->events.size(), keep.events.size());
  EXPECT_EQ((*store)->run_info(kept_run)->status, RunStatus::kComplete);

  // The store still takes new runs.
  RunInfo next;
  next.backend = "sim";
  EXPECT_TRUE((*store)->save_run(next, "", {}, keep).is_ok());
}

}  // namespace
}  // namespace sl::trace
