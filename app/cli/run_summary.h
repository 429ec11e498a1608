#pragma once
// The few lines `streamlens run` prints: makespan, streams, overlap, top kernels.

#include <string>

#include "core/trace/run_info.h"
#include "core/trace/trace.h"

namespace sl::cli {

std::string run_summary_text(const trace::RunInfo& info, const trace::Trace& trace);

}  // namespace sl::cli
