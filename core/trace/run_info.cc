#include "core/trace/run_info.h"

namespace sl::trace {

const char* run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::kRunning: return "running";
    case RunStatus::kComplete: return "complete";
    case RunStatus::kFailed: return "failed";
    case RunStatus::kInterrupted: return "interrupted";
  }
  return "running";
}

bool parse_run_status(std::string_view name, RunStatus* out) {
  for (RunStatus s : {RunStatus::kRunning, RunStatus::kComplete, RunStatus::kFailed, RunStatus::kInterrupted}) {
    if (name == run_status_name(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

}  // namespace sl::trace
