#pragma once
// What is stored about a run besides its events (docs/store.md).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/sched/lowering.h"

namespace sl::trace {

// kInterrupted: stopped by a signal, or `running` while the process that
// recorded it is gone (README.md, "What streamlens promises").
enum class RunStatus { kRunning, kComplete, kFailed, kInterrupted };
const char* run_status_name(RunStatus status);  // "running" | "complete" | "failed" | "interrupted"
bool parse_run_status(std::string_view name, RunStatus* out);

// A captured run's device_model where the capture names no GPU (made
// before the injection library wrote device lines).
inline constexpr const char* kUnnamedCaptureDevice = "cuda";

// The key `link` adds to a run's config_json, naming the module it was
// linked to; a linked run's events carry their step as their iteration (-1
// outside the steps).
inline constexpr std::string_view kLinkedModuleKey = "linked_module";
inline bool config_is_linked(std::string_view config_json) {
  const size_t n = kLinkedModuleKey.size();
  for (size_t at = config_json.find(kLinkedModuleKey); at != std::string_view::npos;
       at = config_json.find(kLinkedModuleKey, at + 1)) {
    if (at > 0 && at + n < config_json.size() && config_json[at - 1] == '"' && config_json[at + n] == '"') return true;
  }
  return false;
}

struct RunInfo {
  int64_t id = 0;
  std::string name;
  std::string program_name;      // module name
  int64_t program_id = 0;
  std::string backend;           // sim | cpu | cuda | nsys | capture
  std::string device_model;      // h200, path of a device file, or the GPU's name
  int64_t num_devices = 1;
  RunStatus status = RunStatus::kRunning;
  int64_t makespan_ns = 0;
  std::string config_json;       // options the run used (init, seed, iterations, overrides...)
  std::string created_at;        // ISO 8601 UTC
  int64_t event_count = 0;
};

}  // namespace sl::trace
