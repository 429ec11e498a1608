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
#include "app/cli/exit_codes.h"
#include "app/cli/store_access.h"
#include "core/trace/store/trace_store.h"
#ifdef SL_HAVE_CUDA
#include "core/exec/cuda/cuda_backend.h"
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
  for (const char* rel : {"libstreamlens_inject.so", "../lib/libstreamlens_inject.so", "../../libstreamlens_inject.so"}) {
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

}  // namespace

int cmd_capture(const StoreArgs& args, const std::string& name, const std::vector<std::string>& command) {
  if (command.empty()) return fail(usage_error("capture needs a command after --"));
  if (exec::cuda_device_count() == 0) return fail(runtime_error("no GPU: capture records CUDA programs"));
  std::string library = injection_library();
  if (!std::filesystem::exists(library)) return fail(runtime_error("injection library not found: " + library));
  auto store = open_store_for_writing(args.db);
  if (!store) return fail(store.status());

  std::string out = (std::filesystem::temp_directory_path() /
                     ("streamlens-capture-" + std::to_string(getpid()) + ".jsonl")).string();
  Result<int> child = run_child(command, library, out);
  if (!child) return fail(child.status());
  Result<trace::Trace> captured = cupti::import_capture_file(out);
  std::filesystem::remove(out);
  if (!captured) return fail(captured.status());

  trace::RunInfo info;
  info.name = name.empty() ? join(command) : name;
  info.program_name = command[0];
  info.backend = "capture";
  info.device_model = "cuda";
  info.config_json = nlohmann::json{{"command", command}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  int64_t max_device = -1;
  for (const trace::Event& e : captured->events) max_device = std::max<int64_t>(max_device, e.device);
  info.num_devices = max_device + 1;
  auto id = (*store)->save_run(info, "", {}, *captured);
  if (!id) return fail(id.status());
  if (*child != 0) {
    (void)(*store)->finish_run(*id, trace::RunStatus::kFailed, captured->makespan_ns(), captured->counters);
  }
  std::printf("captured %zu events from '%s' as run %lld (exit status %d)\n", captured->events.size(),
              info.name.c_str(), static_cast<long long>(*id), *child);
  return *child == 0 ? kExitOk : kExitRuntime;
}
#else
int cmd_capture(const StoreArgs&, const std::string&, const std::vector<std::string>&) {
  return fail(runtime_error("no GPU: this streamlens was built without CUDA (configure with -DSTREAMLENS_CUDA=ON)"));
}
#endif

}  // namespace sl::cli
