// libstreamlens_inject.so: loaded by the CUDA driver through
// CUDA_INJECTION64_PATH (set by `streamlens capture -- CMD`). Records every
// kernel, memcpy and memset of the process with CUPTI and writes them as JSON
// lines (capture_file.h): to $STREAMLENS_CAPTURE_DIR/capture.PID.jsonl, one
// file per process (a launcher's children each load the library), else to
// $STREAMLENS_CAPTURE_FILE (one process). The file is synced every second
// (STREAMLENS_FLUSH_MS), so a process killed outright keeps its capture up
// to then.

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "cupti_tracer/capture_file.h"
#include "cupti_tracer/cupti_api.h"
#include "cupti_tracer/host_pace.h"

namespace {

// A process forked from the captured one shares its file but not its CUPTI
// session: the copy writes nothing (a child that runs CUDA after exec loads
// the library anew, into a file of its own).
bool g_forked = false;

// Writes each record as it arrives. Runs on CUPTI's worker thread or inside
// the flush at exit; the mutex only orders writers, it never spans a CUPTI call.
class FileSink : public sl::cupti::ActivitySink {
 public:
  explicit FileSink(std::FILE* file) : file_(file) {}
  void on_activity(const sl::cupti::Activity& activity) override {
    std::string line = sl::cupti::capture_line(activity);
    if (line.empty()) return;
    write(line);
  }
  void on_dropped(uint64_t count) override { write("{\"k\":\"dropped\",\"n\":" + std::to_string(count) + "}"); }
  void on_unknown_kind(uint32_t kind) override {
    write("{\"k\":\"unknown\",\"kind\":" + std::to_string(kind) + "}");
  }
  void write(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    if (file_ == nullptr || g_forked) return;
    std::fwrite(line.data(), 1, line.size(), file_);
    std::fputc('\n', file_);
  }
  // Hands what was written to the kernel: a process killed after this keeps it.
  void sync() {
    std::lock_guard<std::mutex> lock(mu_);
    if (file_ != nullptr && !g_forked) std::fflush(file_);
  }
  void close() {
    std::lock_guard<std::mutex> lock(mu_);
    if (file_ != nullptr) std::fclose(file_);
    file_ = nullptr;
  }

 private:
  std::mutex mu_;
  std::FILE* file_;
};

FileSink* g_file_sink = nullptr;  // one per process: the driver injects once

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : raw) if (c == '\0') c = ' ';
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

// The host core's pace, timed on the thread that starts or ends the capture
// (the program's own), before CUPTI starts or flushes.
void write_host_probe(const std::string& at) {
  const int64_t probe_ns = sl::cupti::host_probe_ns();
  auto t = sl::cupti::CuptiApi::timestamp();
  g_file_sink->write(sl::cupti::capture_host_line(at, probe_ns, t.is_ok() ? *t : 0));
}

// The name of each GPU the driver shows the process, which the run takes as
// its device model. At the end: the driver loads this library from inside
// cuInit, and calls into it there would come too early. The driver's entry
// points come from the libcuda the process has loaded, not from a link: a
// package of this library must not depend on a driver (dpkg-shlibdeps).
void write_gpu_names() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (driver == nullptr) return;
  auto get_count = reinterpret_cast<CUresult (*)(int*)>(dlsym(driver, "cuDeviceGetCount"));
  auto get = reinterpret_cast<CUresult (*)(CUdevice*, int)>(dlsym(driver, "cuDeviceGet"));
  auto get_name = reinterpret_cast<CUresult (*)(char*, int, CUdevice)>(dlsym(driver, "cuDeviceGetName"));
  int count = 0;
  if (get_count != nullptr && get != nullptr && get_name != nullptr && get_count(&count) == CUDA_SUCCESS) {
    for (int ordinal = 0; ordinal < count; ++ordinal) {
      CUdevice device = 0;
      char name[256] = {};
      if (get(&device, ordinal) != CUDA_SUCCESS) continue;
      if (get_name(name, sizeof name - 1, device) != CUDA_SUCCESS) continue;
      g_file_sink->write(sl::cupti::capture_device_line(ordinal, name));
    }
  }
  dlclose(driver);
}

// Every STREAMLENS_FLUSH_MS (default 1000; 0: never) a thread of ours asks
// CUPTI for the buffers whose records are complete and syncs the file, so
// that a process killed outright (SIGKILL, the OOM killer) leaves its capture
// up to the last period instead of nothing: CUPTI otherwise hands a buffer
// over when its 8 MiB are full or at exit. The flush runs the sink on this
// thread, not the program's.
class PeriodicFlush {
 public:
  void start(long period_ms) {
    if (period_ms <= 0) return;
    thread_ = std::thread([this, period_ms] {
      std::unique_lock<std::mutex> lock(mu_);
      while (!cv_.wait_for(lock, std::chrono::milliseconds(period_ms), [this] { return stopping_; })) {
        lock.unlock();
        (void)sl::cupti::CuptiApi::flush_completed();
        g_file_sink->sync();
        lock.lock();
      }
    });
  }
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

PeriodicFlush* g_periodic_flush = nullptr;  // lives until exit, as the sink

long flush_period_ms() {
  const char* env = std::getenv("STREAMLENS_FLUSH_MS");
  if (env == nullptr || *env == '\0') return 1000;
  char* end = nullptr;
  const long ms = std::strtol(env, &end, 10);
  return end != nullptr && *end == '\0' && ms >= 0 && ms <= 3600000 ? ms : 1000;
}

void finish_capture() {
  if (g_file_sink == nullptr || g_forked) return;
  if (g_periodic_flush != nullptr) g_periodic_flush->stop();
  write_host_probe("end");
  write_gpu_names();
  sl::Status s = sl::cupti::CuptiApi::stop();  // flushes into the sink
  if (!s.is_ok()) std::fprintf(stderr, "streamlens inject: %s\n", s.message().c_str());
  g_file_sink->close();
}

// Opens the capture file and starts CUPTI; 1 on success. Called once, from
// whichever injection comes first.
int start_capture() {
  const char* dir = std::getenv("STREAMLENS_CAPTURE_DIR");
  const char* env = std::getenv("STREAMLENS_CAPTURE_FILE");
  const std::string own = "capture." + std::to_string(::getpid()) + ".jsonl";
  std::string path = dir && *dir ? std::string(dir) + "/" + own : env && *env ? env : "streamlens_" + own;
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    std::fprintf(stderr, "streamlens inject: cannot write %s\n", path.c_str());
    return 0;
  }
  g_file_sink = new FileSink(file);  // lives until exit: CUPTI may call it from its thread
  auto t0 = sl::cupti::CuptiApi::timestamp();
  g_file_sink->write(
      sl::cupti::capture_meta_line(static_cast<long>(::getpid()), command_line(), t0.is_ok() ? *t0 : 0));
  write_host_probe("start");
  sl::Status s = sl::cupti::CuptiApi::start(g_file_sink);
  // STREAMLENS_CAPTURE_RANGE=cudaProfilerApi or nvtx:NAME: mark the ranges
  // (the records are filtered when the capture is read).
  const char* range_env = std::getenv("STREAMLENS_CAPTURE_RANGE");
  const std::string range = range_env != nullptr ? range_env : "";
  auto mark = [](bool on, uint64_t ts) { g_file_sink->write(sl::cupti::capture_range_line(on, ts)); };
  if (s.is_ok() && range == "cudaProfilerApi") s = sl::cupti::CuptiApi::watch_profiler_api(mark);
  if (s.is_ok() && range.rfind("nvtx:", 0) == 0) s = sl::cupti::CuptiApi::watch_nvtx_range(range.substr(5), mark);
  if (!s.is_ok()) {
    std::fprintf(stderr, "streamlens inject: %s\n", s.message().c_str());
    g_file_sink->close();
    return 0;
  }
  std::atexit(finish_capture);
  pthread_atfork(nullptr, nullptr, [] { g_forked = true; });
  g_periodic_flush = new PeriodicFlush();
  g_periodic_flush->start(flush_period_ms());
  return 1;
}

// The driver and NVTX may load this library on two threads at once.
int start_capture_once() {
  static std::once_flag once;
  static int started = 0;
  std::call_once(once, [] { started = start_capture(); });
  return started;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) { return start_capture_once(); }

// NVTX loads the library NVTX_INJECTION64_PATH names and calls this (`capture
// --capture-range nvtx:NAME` points it here) at the process's first NVTX
// call: CUPTI's own NVTX injection, loaded with this library, then reports
// every NVTX call to its subscribers. The capture starts here too, so that
// a range opened before the program first uses CUDA (and the NVTX call that
// loaded us) is seen; CUPTI needs no CUDA context to subscribe.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void* get_export_table) {
  using Init = int (*)(const void*);
  auto cupti_init = reinterpret_cast<Init>(dlsym(RTLD_NEXT, "InitializeInjectionNvtx2"));
  const int nvtx_ready = cupti_init != nullptr ? cupti_init(get_export_table) : 0;
  if (nvtx_ready != 0) start_capture_once();
  return nvtx_ready;
}
