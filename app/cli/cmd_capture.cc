// `streamlens capture -- CMD ARGS...`: run any CUDA program with the CUPTI
// injection library (CUDA_INJECTION64_PATH) and store what it recorded.

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
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

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Runs the command with the injection variables set; returns its exit status.
Result<int> run_child(const std::vector<std::string>& command, const std::string& library, const std::string& out) {
  setenv("CUDA_INJECTION64_PATH", library.c_str(), 1);
  setenv("STREAMLENS_CAPTURE_FILE", out.c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& w : command) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
  unsetenv("CUDA_INJECTION64_PATH");
  unsetenv("STREAMLENS_CAPTURE_FILE");
  if (rc != 0) return runtime_error("cannot start '" + command[0] + "': " + std::strerror(rc));
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return runtime_error("waitpid failed for '" + command[0] + "'");
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}


// The child's XLA_FLAGS: the user's own, then the dump flags (XLA takes the
// last value of a repeated flag, so an explicit --xla_dump_to of the user's
// would be overridden: refuse that instead of guessing).
Result<std::string> xla_flags_with_dump(const std::string& dump_dir) {
  std::string flags = std::getenv("XLA_FLAGS") != nullptr ? std::getenv("XLA_FLAGS") : "";
  if (flags.find("--xla_dump_to") != std::string::npos) {
    return usage_error("XLA_FLAGS already sets --xla_dump_to; drop it or drop --xla-dump");
  }
  std::error_code ec;
  std::filesystem::create_directories(dump_dir, ec);
  if (ec) return runtime_error("cannot create " + dump_dir + ": " + ec.message());
  return (flags.empty() ? "" : flags + " ") + "--xla_dump_to=" + dump_dir + " --xla_dump_hlo_as_text";
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
    auto flags = xla_flags_with_dump(capture.xla_dump);
    if (!flags) return fail(flags.status());
    setenv("XLA_FLAGS", flags->c_str(), 1);
  }
  Result<const app::CudaPlugin*> cuda = app::cuda_plugin();
  if (!cuda) return fail(cuda.status());
  if ((*cuda)->device_count() == 0) return fail(runtime_error("no GPU: capture records CUDA programs"));
  std::string library = injection_library();
  if (!std::filesystem::exists(library)) return fail(runtime_error("injection library not found: " + library));
  auto store = open_store_for_writing(args.db);
  if (!store) return fail(store.status());

  std::string out = (std::filesystem::temp_directory_path() /
                     ("streamlens-capture-" + std::to_string(getpid()) + ".jsonl")).string();
  if (!capture.capture_range.empty()) setenv("STREAMLENS_CAPTURE_RANGE", capture.capture_range.c_str(), 1);
  if (nvtx_range) setenv("NVTX_INJECTION64_PATH", library.c_str(), 1);
  Result<int> child = run_child(command, library, out);
  unsetenv("STREAMLENS_CAPTURE_RANGE");
  if (nvtx_range) unsetenv("NVTX_INJECTION64_PATH");
  if (had_xla_flags) setenv("XLA_FLAGS", saved_xla_flags.c_str(), 1);
  else unsetenv("XLA_FLAGS");
  if (!child) return fail(child.status());
  cupti::CaptureWindow window;
  window.delay_ns = static_cast<int64_t>(capture.delay_s * 1e9);
  window.duration_ns = static_cast<int64_t>(capture.duration_s * 1e9);
  window.profiler_ranges = !capture.capture_range.empty();
  Result<trace::Trace> captured = cupti::import_capture_file(out, window);
  std::filesystem::remove(out);
  if (!captured) return fail(captured.status());
  if (!capture.capture_range.empty() && captured->events.empty()) {
    std::fprintf(stderr, "streamlens: warning: nothing ran inside a %s range%s\n", capture.capture_range.c_str(),
                 nvtx_range ? " (NVTX calls made before the program first used CUDA are not seen)" : "");
  }

  trace::RunInfo info = captured_run_info(
      name.empty() ? join(command) : name, command[0],
      nlohmann::json{{"command", command}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), *captured);
  Result<int64_t> id = int64_t{0};
  std::string linked_line;
  if (!capture.xla_dump.empty()) {
    // One run, linked to the module that ran; a capture that matches no
    // dumped module is still saved as captured, with the reason on stderr.
    trace::Trace linked_trace = *captured;
    auto linked = link_to_dump_dir(linked_trace, capture.xla_dump);
    if (linked) {
      nlohmann::json config = nlohmann::json::parse(info.config_json, nullptr, false);
      config["xla_dump"] = capture.xla_dump;
      info.config_json = config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      id = save_linked_run(**store, info, *linked, linked_trace, 0);
      linked_line = link_summary_line(*linked);
    } else {
      std::fprintf(stderr, "streamlens: warning: not linked: %s\n", linked.status().message().c_str());
      id = (*store)->save_run(info, "", {}, *captured);
    }
  } else {
    id = (*store)->save_run(info, "", {}, *captured);
  }
  if (!id) return fail(id.status());
  if (*child != 0) {
    (void)(*store)->finish_run(*id, trace::RunStatus::kFailed, captured->makespan_ns(), captured->counters);
  }
  std::printf("captured %zu events from '%s' as run %lld (exit status %d)\n", captured->events.size(),
              info.name.c_str(), static_cast<long long>(*id), *child);
  if (!linked_line.empty()) std::printf("linked: %s\n", linked_line.c_str());
  return *child == 0 ? kExitOk : kExitRuntime;
}
#else
int cmd_capture(const StoreArgs&, const CaptureArgs&) {
  return fail(runtime_error("no GPU: this streamlens was built without CUDA (configure with -DSTREAMLENS_CUDA=ON)"));
}
#endif

}  // namespace sl::cli
