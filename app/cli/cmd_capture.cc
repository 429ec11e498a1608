// `streamlens capture -- CMD ARGS...`: run any CUDA program with the CUPTI
// injection library (CUDA_INJECTION64_PATH) and store what it recorded.

#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/capture_losses.h"
#include "app/cli/commands.h"
#include "app/cli/forward_signals.h"
#include "app/cli/xla_dump_flags.h"
#include "app/cli/xla_link.h"
#include "app/cli/exit_codes.h"
#include "app/cli/store_access.h"
#include "core/trace/store/trace_store.h"
#ifdef SL_HAVE_CUDA
#include "app/common/cuda_plugin.h"
#include "cupti_tracer/capture_file.h"
#endif

extern char** environ;

namespace sl::cli {
#ifdef SL_HAVE_CUDA
namespace {

// STREAMLENS_INJECT, else the library built beside this binary.
std::string injection_library() {
  if (const char* env = std::getenv("STREAMLENS_INJECT")) return env;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (const char* rel : {"libstreamlens_inject.so", "../lib/streamlens/libstreamlens_inject.so",
                          "../lib/libstreamlens_inject.so", "../../libstreamlens_inject.so"}) {
    std::filesystem::path candidate = exe.parent_path() / rel;
    if (!ec && std::filesystem::exists(candidate)) return std::filesystem::weakly_canonical(candidate).string();
  }
  return SL_INJECT_LIBRARY;
}

// CUDA drops an injection library it cannot load without a word (a missing
// libcupti, an undefined symbol), and the capture would then say the command
// used no CUDA: load it here first, as CUDA will, and say why it fails.
Status check_loadable(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return runtime_error("the injection library " + library + " cannot be loaded: " + (why ? why : "unknown error"));
  }
  dlclose(handle);
  return ok_status();
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Runs the command with the injection variables set; returns its exit status.
// Every process of it that uses CUDA writes a file of its own into `out_dir`.
Result<int> run_child(const std::vector<std::string>& command, const std::string& library,
                      const std::string& out_dir) {
  setenv("CUDA_INJECTION64_PATH", library.c_str(), 1);
  setenv("STREAMLENS_CAPTURE_DIR", out_dir.c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& w : command) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
  unsetenv("CUDA_INJECTION64_PATH");
  unsetenv("STREAMLENS_CAPTURE_DIR");
  if (rc != 0) return runtime_error("cannot start '" + command[0] + "': " + std::strerror(rc));
  int status = 0;
  {
    ForwardSignals forward(pid);  // stopping the capture stops the command, whose records are then saved
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) return runtime_error("waitpid failed for '" + command[0] + "'");
    }
    if (forward.received() > 0) {
      std::fprintf(stderr, "streamlens: %s '%s' on a signal; saving what it recorded\n",
                   forward.received() == 1 ? "sent SIGINT to" : "killed", command[0].c_str());
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// One process's capture file in the capture directory (capture.PID.jsonl).
struct ProcessCapture {
  long pid = 0;
  std::string path;
};

// The processes that wrote a capture, by process id (a launcher's workers
// each load the injection library).
std::vector<ProcessCapture> process_captures(const std::filesystem::path& dir) {
  std::vector<ProcessCapture> out;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = f.path().filename().string();
    if (!file.starts_with("capture.") || !file.ends_with(".jsonl")) continue;
    const std::string pid = file.substr(8, file.size() - 8 - 6);
    if (pid.empty() || !std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    out.push_back({std::stol(pid), f.path().string()});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
  return out;
}

// The child's XLA_FLAGS with the dump flags (app/cli/xla_dump_flags.h), the
// dump folder made.
Result<std::string> child_xla_flags(const std::string& dump_dir) {
  auto flags = xla_flags_with_dump(std::getenv("XLA_FLAGS") != nullptr ? std::getenv("XLA_FLAGS") : "", dump_dir);
  if (!flags) return flags;
  std::error_code ec;
  std::filesystem::create_directories(dump_dir, ec);
  if (ec) return runtime_error("cannot create " + dump_dir + ": " + ec.message());
  return flags;
}

// Saves one process's capture as a run, linked to the dumped module it ran
// when there is a dump (a capture that matches no dumped module is still
// saved as captured, with the reason on stderr), and says so on stdout.
Result<int64_t> save_capture(trace::TraceStore& store, const std::string& name,
                             const std::vector<std::string>& command, long pid, const trace::Trace& captured,
                             const std::string& xla_dump, int child_status) {
  warn_capture_losses(captured, "'" + name + "'");
  trace::RunInfo info = captured_run_info(
      name, command[0],
      nlohmann::json{{"command", command}, {"pid", pid}}.dump(-1, ' ', false,
                                                               nlohmann::json::error_handler_t::replace),
      captured);
  Result<int64_t> id = int64_t{0};
  std::string linked_line;
  if (!xla_dump.empty()) {
    trace::Trace linked_trace = captured;
    auto linked = link_to_dump_dir(linked_trace, xla_dump);
    if (linked) {
      nlohmann::json config = nlohmann::json::parse(info.config_json, nullptr, false);
      config["xla_dump"] = xla_dump;
      info.config_json = config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      id = save_linked_run(store, info, *linked, linked_trace, 0);
      linked_line = link_summary_line(*linked);
    } else {
      std::fprintf(stderr, "streamlens: warning: %s not linked: %s\n", name.c_str(),
                   linked.status().message().c_str());
      id = store.save_run(info, "", {}, captured);
    }
  } else {
    id = store.save_run(info, "", {}, captured);
  }
  if (!id) return id.status();
  if (child_status != 0) {
    (void)store.finish_run(*id, trace::RunStatus::kFailed, captured.makespan_ns(), captured.counters);
  }
  std::printf("captured %zu events from '%s' as run %lld (exit status %d)\n", captured.events.size(), name.c_str(),
              static_cast<long long>(*id), child_status);
  if (!linked_line.empty()) std::printf("linked: %s\n", linked_line.c_str());
  return id;
}

}  // namespace

int cmd_capture(const StoreArgs& args, const CaptureArgs& capture) {
  const std::string& name = capture.name;
  const std::vector<std::string>& command = capture.command;
  if (command.empty()) return fail(usage_error("capture needs a command after --"));
  // NVTX reports its calls only to an injection it loads itself: the user's
  // own NVTX_INJECTION64_PATH (another tool's) would be replaced, so refuse.
  const bool nvtx_range = capture.capture_range.rfind("nvtx:", 0) == 0;
  if (nvtx_range && std::getenv("NVTX_INJECTION64_PATH") != nullptr) {
    return fail(usage_error("--capture-range nvtx:NAME needs NVTX_INJECTION64_PATH unset (it names another tool's "
                            "NVTX injection)"));
  }
  std::string saved_xla_flags = std::getenv("XLA_FLAGS") != nullptr ? std::getenv("XLA_FLAGS") : "";
  const bool had_xla_flags = std::getenv("XLA_FLAGS") != nullptr;
  if (!capture.xla_dump.empty()) {
    auto flags = child_xla_flags(capture.xla_dump);
    if (!flags) return fail(flags.status());
    setenv("XLA_FLAGS", flags->c_str(), 1);
  }
  Result<const app::CudaPlugin*> cuda = app::cuda_plugin();
  if (!cuda) return fail(cuda.status());
  if ((*cuda)->device_count() == 0) return fail(runtime_error("no GPU: capture records CUDA programs"));
  std::string library = injection_library();
  if (!std::filesystem::exists(library)) return fail(runtime_error("injection library not found: " + library));
  if (Status loadable = check_loadable(library); !loadable.is_ok()) return fail(loadable);
  auto store = open_store_for_writing(args.db);
  if (!store) return fail(store.status());

  // A directory of its own: every process of the command that uses CUDA
  // writes its file there (a launcher's workers, a script's subprocesses).
  const std::filesystem::path out_dir =
      std::filesystem::temp_directory_path() / ("streamlens-capture-" + std::to_string(getpid()));
  std::error_code ec;
  std::filesystem::remove_all(out_dir, ec);
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return fail(runtime_error("cannot create " + out_dir.string() + ": " + ec.message()));
  if (!capture.capture_range.empty()) setenv("STREAMLENS_CAPTURE_RANGE", capture.capture_range.c_str(), 1);
  if (nvtx_range) setenv("NVTX_INJECTION64_PATH", library.c_str(), 1);
  Result<int> child = run_child(command, library, out_dir.string());
  unsetenv("STREAMLENS_CAPTURE_RANGE");
  if (nvtx_range) unsetenv("NVTX_INJECTION64_PATH");
  if (had_xla_flags) setenv("XLA_FLAGS", saved_xla_flags.c_str(), 1);
  else unsetenv("XLA_FLAGS");
  if (!child) {
    std::filesystem::remove_all(out_dir, ec);
    return fail(child.status());
  }
  cupti::CaptureWindow window;
  window.delay_ns = static_cast<int64_t>(capture.delay_s * 1e9);
  window.duration_ns = static_cast<int64_t>(capture.duration_s * 1e9);
  window.profiler_ranges = !capture.capture_range.empty();
  std::vector<std::pair<long, trace::Trace>> captured;
  std::optional<Status> unreadable;  // the first file that could not be read
  for (const ProcessCapture& p : process_captures(out_dir)) {
    Result<trace::Trace> t = cupti::import_capture_file(p.path, window);
    if (t) {
      captured.emplace_back(p.pid, std::move(*t));
    } else {
      std::fprintf(stderr, "streamlens: warning: process %ld: %s\n", p.pid, t.status().message().c_str());
      if (!unreadable) unreadable = t.status();
    }
  }
  if (unreadable) {
    // Not lost: the raw records stay, for `streamlens import` once the cause is fixed.
    std::fprintf(stderr, "streamlens: the capture files are kept in %s\n", out_dir.c_str());
  } else {
    std::filesystem::remove_all(out_dir, ec);
  }
  if (captured.empty() && unreadable) return fail(*unreadable);
  if (captured.empty()) {
    return fail(runtime_error(fmt::format("'{}' (exit status {}) used no CUDA: nothing was captured", command[0],
                                          *child)));
  }
  // A process that recorded nothing (a launcher that only set CUDA up) is
  // left out where others recorded something.
  const bool any_events =
      std::any_of(captured.begin(), captured.end(), [](const auto& c) { return !c.second.events.empty(); });
  if (any_events) {
    std::erase_if(captured, [](const auto& c) { return c.second.events.empty(); });
  } else {
    captured.resize(1);
    if (!capture.capture_range.empty()) {
      std::fprintf(stderr, "streamlens: warning: nothing ran inside a %s range\n", capture.capture_range.c_str());
    }
  }
  const std::string base_name = name.empty() ? join(command) : name;
  for (auto& [pid, trace] : captured) {
    const std::string run_name = captured.size() > 1 ? fmt::format("{} (pid {})", base_name, pid) : base_name;
    Result<int64_t> id = save_capture(**store, run_name, command, pid, trace, capture.xla_dump, *child);
    if (!id) return fail(id.status());
  }
  if (captured.size() > 1) {
    std::printf("%zu processes captured, a run each; `streamlens merge` joins them into one run\n",
                captured.size());
  }
  return *child == 0 ? kExitOk : kExitRuntime;
}
#else
int cmd_capture(const StoreArgs&, const CaptureArgs&) {
  return fail(runtime_error("no GPU: this streamlens was built without CUDA (configure with -DSTREAMLENS_CUDA=ON)"));
}
#endif

}  // namespace sl::cli
