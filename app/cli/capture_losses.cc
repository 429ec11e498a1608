#include "app/cli/capture_losses.h"

#include <cstdio>

#include "core/trace/capture_losses.h"

namespace sl::cli {

void warn_capture_losses(const trace::Trace& trace, const std::string& what) {
  for (const trace::Counter& c : trace.counters) {
    if (c.value <= 0) continue;
    if (c.name == trace::kCuptiDroppedRecordsCounter) {
      std::fprintf(stderr, "streamlens: warning: %s: CUPTI dropped %lld records: the timeline misses some GPU work\n",
                   what.c_str(), static_cast<long long>(c.value));
    } else if (c.name == trace::kCaptureBadLinesCounter) {
      std::fprintf(stderr,
                   "streamlens: warning: %s: %lld line%s of the capture could not be read (cut short while "
                   "written, or not a streamlens capture); the rest is kept\n",
                   what.c_str(), static_cast<long long>(c.value), c.value == 1 ? "" : "s");
    }
  }
}

}  // namespace sl::cli
