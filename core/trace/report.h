#pragma once
// Text and JSON reports for the CLI (`runs`, `show`, `run --json`,
// `show --json`). One JSON builder serves both `run --json` and
// `show --json` so the two print the same object for the same run.

#include <string>
#include <vector>

#include "core/trace/run_info.h"
#include "core/trace/trace.h"

namespace sl::trace {

// `streamlens runs`: one row per run (id, name, program, backend, device,
// devices, status, events, makespan, created).
std::string format_runs_table(const std::vector<RunInfo>& runs);

// Event indices in display order: start time, then device, stream, end, index.
std::vector<uint32_t> display_order(const Trace& trace);

// `streamlens show RUN`: a summary line, the events table (device, stream,
// kind, name, instruction, start µs, duration µs), per-stream busy time,
// compute/communication overlap, critical path, kernel statistics, counters.
// max_events = 0 prints every event.
std::string format_show_text(const RunInfo& info, const Trace& trace, size_t max_events = 0);

// The `run --json` / `show --json` object (docs/cli.md), one line:
// {"run":ID,"backend":...,"device_model":...,"makespan_ns":N,"events":[{"device","stream",
//  "stream_kind","kind","name","instruction","start_ns","end_ns"},...]}
// Times count from the trace's first event; makespan_ns is info.makespan_ns,
// or the trace's when that is 0. indent < 0: compact.
std::string run_json(const RunInfo& info, const Trace& trace, int indent = -1);

// "1234.567" (µs with three decimals) for a duration or time in ns.
std::string format_us(int64_t ns);

}  // namespace sl::trace
