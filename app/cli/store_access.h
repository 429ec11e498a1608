#pragma once
// Opening the database a command writes to. A 0-byte file (what `touch`
// leaves, or a failed download) becomes a new store, as SQLite itself would
// treat it, but never silently: a note on stderr says so.

#include <memory>
#include <string>

#include "core/common/status.h"
#include "core/trace/store/trace_store.h"

namespace sl::cli {

Result<std::unique_ptr<trace::TraceStore>> open_store_for_writing(const std::string& db);

}  // namespace sl::cli
