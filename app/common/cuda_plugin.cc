#include "app/common/cuda_plugin.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

namespace sl::app {
namespace {

[[maybe_unused]] std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("STREAMLENS_CUDA_PLUGIN"); env && *env) {
    out.push_back(env);
    return out;  // asked for one file: no fallback that would hide a mistake
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const char* rel : {"libstreamlens_cuda.so", "../lib/streamlens/libstreamlens_cuda.so",
                            "../../libstreamlens_cuda.so", "../../../libstreamlens_cuda.so"}) {
      out.push_back((exe.parent_path() / rel).string());
    }
  }
#ifdef SL_CUDA_PLUGIN
  out.push_back(SL_CUDA_PLUGIN);
#endif
  return out;
}

Result<const CudaPlugin*> load() {
#ifndef SL_HAVE_CUDA
  return runtime_error("no GPU: this streamlens was built without CUDA (configure with -DSTREAMLENS_CUDA=ON)");
#else
  std::string reason;
  for (const std::string& path : candidates()) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      reason = why ? why : path;
      break;  // the plugin is there but cannot load (missing CUDA libraries): say why
    }
    auto* entry = reinterpret_cast<const CudaPlugin* (*)()>(dlsym(handle, "streamlens_cuda_plugin"));
    const CudaPlugin* plugin = entry ? entry() : nullptr;
    if (plugin == nullptr || plugin->abi != kCudaPluginAbi) {
      return runtime_error("no GPU: " + path + " is not a streamlens CUDA plugin of this version");
    }
    return plugin;
  }
  const char* env = std::getenv("STREAMLENS_CUDA_PLUGIN");
  if (reason.empty() && env != nullptr && *env != '\0') {
    reason = std::string("STREAMLENS_CUDA_PLUGIN=") + env + ": no such file";
  }
  if (reason.empty()) reason = "libstreamlens_cuda.so not found beside the executable or in lib/streamlens";
  return runtime_error("no GPU: the CUDA backend is not available (" + reason + ")");
#endif
}

}  // namespace

Result<const CudaPlugin*> cuda_plugin() {
  static std::once_flag once;
  static Result<const CudaPlugin*> loaded = runtime_error("not loaded");
  std::call_once(once, [] { loaded = load(); });
  return loaded;
}

}  // namespace sl::app
