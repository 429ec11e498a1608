#pragma once
// What a capture lost, kept as the run's counters: the capture side
// (cupti_tracer) writes them, `capture`/`import`/`run` warn about them
// (app/cli/capture_losses.h) and the GPU benchmarks check them. One name
// each, here, so that writer and readers cannot drift apart.

#include <string_view>

namespace sl::trace {

// Records CUPTI could not keep: its buffers were full.
inline constexpr std::string_view kCuptiDroppedRecordsCounter = "cupti_dropped_records";
// Lines of the capture file the reader skipped (cut short by a kill, or not a capture's).
inline constexpr std::string_view kCaptureBadLinesCounter = "capture_bad_lines";

}  // namespace sl::trace
