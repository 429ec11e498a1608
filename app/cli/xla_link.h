#pragma once
// Linking captured runs to the XLA modules they executed (`streamlens link`,
// `streamlens capture --xla-dump`): the CLI's glue around core/xla.

#include <cstdint>
#include <string>

#include "core/common/status.h"
#include "core/trace/store/trace_store.h"
#include "core/trace/trace.h"
#include "core/xla/step_linker.h"

namespace sl::cli {

struct LinkedModule {
  std::string module_path;
  std::string thunks_path;   // empty: planned from the module's schedule alone
  std::string module_name;
  std::string module_text;
  xla::LinkSummary summary;
};

// Links `trace` (rewritten in place) to one module file. `thunks_path` empty:
// the thunk dump beside the module when there is one.
Result<LinkedModule> link_to_module(trace::Trace& trace, const std::string& module_path,
                                    const std::string& thunks_path);

// Among the after-optimizations modules of an XLA dump directory, links
// `trace` to the one whose steps hold the most of its kernel time.
Result<LinkedModule> link_to_dump_dir(trace::Trace& trace, const std::string& dump_dir);

// Saves the linked trace as a new run (the captured one is left as it was)
// and returns its id.
Result<int64_t> save_linked_run(trace::TraceStore& store, trace::RunInfo info, const LinkedModule& linked,
                                const trace::Trace& trace, int64_t source_run);

// A captured run's RunInfo: backend "capture", the GPU the capture names as
// its device model ("cuda" in captures made before the device lines), device
// count from the trace, `config` (a JSON object) as its config.
trace::RunInfo captured_run_info(const std::string& name, const std::string& program, const std::string& config,
                                 const trace::Trace& trace);

// "31 steps, 98.7% of the kernel time in steps linked to instructions".
std::string link_summary_line(const LinkedModule& linked);

}  // namespace sl::cli
