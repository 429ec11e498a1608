#pragma once
// Exporting a run: Chrome trace JSON (opens in Perfetto and chrome://tracing)
// and CSV. Times count from the run's first event.

#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/trace/run_info.h"
#include "core/trace/trace.h"

namespace sl::trace {

enum class ExportFormat { kChrome, kCsv };
// "chrome" | "csv"; usage error otherwise.
Result<ExportFormat> parse_export_format(std::string_view name);

// {"traceEvents":[...],"displayTimeUnit":"ns","otherData":{...}}: pid = device
// (process_name "GPU N"), tid = stream (thread_name "stream N (compute)" or
// "stream N (communication)"), one "X" event per event with ts/dur in µs
// (fractional) and args {instruction, kind, bytes, flops, correlation,
// iteration}; each dependency is a flow: "s" on the source, "f" (bp "e") on
// the target, sharing an id.
std::string chrome_trace_json(const RunInfo& info, const Trace& trace);

// Header plus one row per event in display order:
// device,stream,stream_kind,kind,name,instruction,start_ns,end_ns,duration_ns,bytes,flops,correlation,iteration
std::string trace_csv(const Trace& trace);

// Renders `format` and writes it to `path` (kRuntime on I/O errors).
Status export_run(const RunInfo& info, const Trace& trace, ExportFormat format, const std::string& path);

}  // namespace sl::trace
