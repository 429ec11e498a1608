#pragma once
// The XLA_FLAGS `capture --xla-dump DIR` gives the captured command.

#include <string>

#include "core/common/status.h"

namespace sl::cli {

// The user's own flags, then the dump flags: HLO text into `dump_dir`, and
// XLA's autotuning log beside it (DIR/autotune_logs.txt; what-ifs across
// GEMM emitters cost the kernels a capture never ran by it, sim/trace_driven.h)
// unless the user's flags name their own. XLA takes the last value of a
// repeated flag, so a user's --xla_dump_to would be overridden: that is a
// usage error instead of a guess.
Result<std::string> xla_flags_with_dump(const std::string& user_flags, const std::string& dump_dir);

}  // namespace sl::cli
