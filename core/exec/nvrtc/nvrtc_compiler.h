#pragma once
// Compiling generated kernels (core/exec/codegen) with NVRTC at load time,
// cached on disk: the key is a hash of the source, the target and NVRTC's
// version, so a changed generator or toolkit never reuses a stale binary.
// Needs libnvrtc only, no GPU (compiling for a named architecture).

#include <cstdint>
#include <string>

#include "core/common/status.h"

namespace sl::exec::nvrtc {

struct CompileOptions {
  std::string arch = "sm_90";  // sm_XX: a CUBIN; compute_XX: PTX
  std::string cache_dir;       // empty: no disk cache
};

struct Compiled {
  std::string binary;        // CUBIN or PTX (NUL-terminated text)
  bool ptx = false;
  bool from_cache = false;
  double milliseconds = 0;   // NVRTC time, or the cache read
};

// `source` (one translation unit, no includes) compiled for options.arch;
// a compile error returns NVRTC's log.
Result<Compiled> compile(const std::string& source, const std::string& name, const CompileOptions& options);

// $XDG_CACHE_HOME/streamlens/kernels, else $HOME/.cache/streamlens/kernels,
// else empty (no cache).
std::string default_cache_dir();

// 64-bit FNV-1a of the text, as 16 hex digits.
std::string hash_hex(const std::string& text);

// "13.0"
std::string nvrtc_version();

}  // namespace sl::exec::nvrtc
