#pragma once
// `show` for a capture linked to its XLA module: the steps, then the median
// step's instructions by GPU time with the Python line each came from (the
// module's stack-frame tables), then the median step's events.

#include <string>

#include "app/common/run_ref.h"
#include "core/trace/run_info.h"
#include "core/trace/trace.h"

namespace sl::cli {

// `program_text` is the module the run is linked to (the store keeps it).
std::string format_linked_show(const trace::RunInfo& info, const trace::Trace& trace, const std::string& program_text);

}  // namespace sl::cli
