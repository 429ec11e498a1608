#pragma once
// What a capture lost, said on stderr where a capture becomes a run
// (`capture`, `import`, `run --backend cuda`): records CUPTI dropped and
// lines of a capture file that could not be read (a process killed while
// writing it). The run keeps the rest; its counters keep the counts.

#include <string>

#include "core/trace/trace.h"

namespace sl::cli {

// Prints one warning line per loss that `trace`'s counters show, naming `what`
// (the run or file); nothing when none.
void warn_capture_losses(const trace::Trace& trace, const std::string& what);

}  // namespace sl::cli
