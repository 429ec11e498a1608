// NVRTC compilation with a disk cache (nvrtc_compiler.h).

#include "core/exec/nvrtc/nvrtc_compiler.h"

#include <fmt/format.h>
#include <nvrtc.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace sl::exec::nvrtc {
namespace {

namespace fs = std::filesystem;

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

Status nvrtc_error(nvrtcResult r, const std::string& what) {
  return runtime_error(fmt::format("nvrtc: {}: {}", what, nvrtcGetErrorString(r)));
}

bool read_file(const fs::path& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return !out->empty();
}

// Written beside its final name and renamed, so a reader never sees half a file.
void write_file(const fs::path& path, const std::string& data) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return;
  const fs::path tmp = path.string() + fmt::format(".tmp{}", static_cast<long>(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) return;
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) return;
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

Result<Compiled> run_nvrtc(const std::string& source, const std::string& name, const std::string& arch) {
  Compiled out;
  out.ptx = arch.rfind("compute_", 0) == 0;
  nvrtcProgram prog = nullptr;
  nvrtcResult r = nvrtcCreateProgram(&prog, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) return nvrtc_error(r, "create " + name);
  const std::string arch_flag = "--gpu-architecture=" + arch;
  const char* opts[] = {arch_flag.c_str(), "--std=c++17", "--device-as-default-execution-space"};
  r = nvrtcCompileProgram(prog, 3, opts);
  if (r != NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtcGetProgramLogSize(prog, &size);
    std::string log(size, '\0');
    if (size > 0) nvrtcGetProgramLog(prog, log.data());
    nvrtcDestroyProgram(&prog);
    return runtime_error(fmt::format("nvrtc: {} does not compile: {}", name, log));
  }
  size_t size = 0;
  r = out.ptx ? nvrtcGetPTXSize(prog, &size) : nvrtcGetCUBINSize(prog, &size);
  if (r == NVRTC_SUCCESS) {
    out.binary.resize(size);
    r = out.ptx ? nvrtcGetPTX(prog, out.binary.data()) : nvrtcGetCUBIN(prog, out.binary.data());
  }
  nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS) return nvrtc_error(r, "read the binary of " + name);
  return out;
}

}  // namespace

std::string hash_hex(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "?";
  return fmt::format("{}.{}", major, minor);
}

std::string default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return (fs::path(xdg) / "streamlens" / "kernels").string();
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return (fs::path(home) / ".cache" / "streamlens" / "kernels").string();
  }
  return {};
}

Result<Compiled> compile(const std::string& source, const std::string& name, const CompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  fs::path cached;
  if (!options.cache_dir.empty()) {
    const std::string key = hash_hex(source + '\n' + options.arch + '\n' + nvrtc_version());
    cached = fs::path(options.cache_dir) / (key + (options.arch.rfind("compute_", 0) == 0 ? ".ptx" : ".cubin"));
    Compiled hit;
    if (read_file(cached, &hit.binary)) {
      hit.ptx = cached.extension() == ".ptx";
      hit.from_cache = true;
      hit.milliseconds = ms_since(start);
      return hit;
    }
  }
  SL_ASSIGN_OR_RETURN(Compiled out, run_nvrtc(source, name, options.arch));
  if (!cached.empty()) write_file(cached, out.binary);
  out.milliseconds = ms_since(start);
  return out;
}

}  // namespace sl::exec::nvrtc
