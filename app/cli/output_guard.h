#pragma once
// Never write over the open database or an input (README.md, "What streamlens promises"): an
// output that is the same file as one of them is a usage error (exit 2).

#include <string>
#include <vector>

#include "core/common/status.h"

namespace sl::cli {

// `out` must not be `database` (nor its -wal, -shm or -journal file) nor any
// of `inputs`. Paths that do not exist yet are compared by their normal form.
Status refuse_overwrite(const std::string& out, const std::string& database, const std::vector<std::string>& inputs);

}  // namespace sl::cli
