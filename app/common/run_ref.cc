#include "app/common/run_ref.h"

#include <algorithm>
#include <charconv>
#include <vector>

namespace sl::app {

Result<int64_t> resolve_run(trace::TraceStore& store, const std::string& ref) {
  if (ref.rfind("last", 0) == 0) {
    // "last" is the newest run, "last-1" the one before it, and so on.
    size_t back = 0;
    if (ref.size() > 4) {
      auto [ptr, ec] = std::from_chars(ref.data() + 5, ref.data() + ref.size(), back);
      if (ref[4] != '-' || ec != std::errc() || ptr != ref.data() + ref.size()) {
        return usage_error("a run is a positive id, 'last' or 'last-N', got '" + ref + "'");
      }
    }
    SL_ASSIGN_OR_RETURN(std::vector<trace::RunInfo> runs, store.list_runs());
    std::vector<int64_t> ids;
    for (const trace::RunInfo& r : runs) ids.push_back(r.id);
    std::sort(ids.rbegin(), ids.rend());
    if (back >= ids.size()) return not_found(store.path() + " holds " + std::to_string(ids.size()) + " runs, no " + ref);
    return ids[back];
  }
  int64_t id = 0;
  auto [ptr, ec] = std::from_chars(ref.data(), ref.data() + ref.size(), id);
  if (ec != std::errc() || ptr != ref.data() + ref.size() || id <= 0) {
    return usage_error("a run is a positive id or 'last', got '" + ref + "'");
  }
  Result<trace::RunInfo> info = store.run_info(id);
  if (!info) return info.status();
  return id;
}

}  // namespace sl::app

namespace sl::app {

Result<StoredRun> load_stored_run(trace::TraceStore& store, const std::string& ref) {
  StoredRun run;
  SL_ASSIGN_OR_RETURN(run.id, resolve_run(store, ref));
  SL_ASSIGN_OR_RETURN(run.info, store.run_info(run.id));
  SL_ASSIGN_OR_RETURN(run.trace, store.load_trace(run.id));
  return run;
}

bool is_linked_run(const trace::RunInfo& info) {
  return trace::config_is_linked(info.config_json);
}

}  // namespace sl::app
