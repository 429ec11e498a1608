// `streamlens import CAPTURE.jsonl [--xla-dump DIR]`: stores a capture file
// written by the injection library (STREAMLENS_CAPTURE_FILE) as a run, so a
// capture made elsewhere, or kept from an earlier `capture`, can be linked
// and studied without a GPU.

#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/cli/capture_losses.h"
#include "app/cli/commands.h"
#include "app/cli/exit_codes.h"
#include "app/cli/xla_link.h"
#include "core/trace/store/trace_store.h"
#ifdef SL_HAVE_CUDA
#include "cupti_tracer/capture_file.h"  // needs CUPTI's headers, none of CUDA's libraries
#endif

namespace sl::cli {

int cmd_import_capture(const StoreArgs& args, const std::string& file, const std::string& name,
                       const std::string& xla_dump) {
#ifdef SL_HAVE_CUDA
  auto captured = cupti::import_capture_file(file, cupti::CaptureWindow{});
  if (!captured) return fail(captured.status());
  warn_capture_losses(*captured, file);
  auto store = trace::TraceStore::open(args.db);
  if (!store) return fail(store.status());
  trace::RunInfo info = captured_run_info(
      name.empty() ? "capture " + file : name, file,
      nlohmann::json{{"capture_file", file}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
      *captured);
  Result<int64_t> id = int64_t{0};
  std::string line;
  if (!xla_dump.empty()) {
    auto linked = link_to_dump_dir(*captured, xla_dump);
    if (!linked) return fail(linked.status());
    id = save_linked_run(**store, info, *linked, *captured, 0);
    line = link_summary_line(*linked);
  } else {
    id = (*store)->save_run(info, "", {}, *captured);
  }
  if (!id) return fail(id.status());
  std::printf("imported %s as run %lld (%zu events)\n", file.c_str(), static_cast<long long>(*id),
              captured->events.size());
  if (!line.empty()) std::printf("linked: %s\n", line.c_str());
  return kExitOk;
#else
  (void)args, (void)name, (void)xla_dump;
  return fail(runtime_error("importing " + file + " needs a streamlens built with CUDA (its capture reader)"));
#endif
}

}  // namespace sl::cli
