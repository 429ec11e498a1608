// Commands that read the database: runs, show, compare.

#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/exit_codes.h"
#include "app/cli/run_ref.h"
#include "core/trace/compare.h"
#include "core/trace/report.h"
#include "core/trace/store/trace_store.h"

namespace sl::cli {

Result<std::unique_ptr<trace::TraceStore>> open_existing_store(const std::string& db) {
  return trace::TraceStore::open(db, trace::TraceStore::Mode::kReadOnly);
}

int cmd_runs(const StoreArgs& args) {
  auto store = open_existing_store(args.db);
  if (!store) return fail(store.status());
  auto runs = (*store)->list_runs();
  if (!runs) return fail(runs.status());
  if (args.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const trace::RunInfo& r : *runs) {
      out.push_back({{"id", r.id}, {"name", r.name}, {"program", r.program_name}, {"backend", r.backend},
                     {"device_model", r.device_model}, {"devices", r.num_devices},
                     {"status", trace::run_status_name(r.status)}, {"makespan_ns", r.makespan_ns},
                     {"events", r.event_count}, {"created_at", r.created_at}});
    }
    std::printf("%s\n", out.dump(1).c_str());
  } else {
    std::fputs(trace::format_runs_table(*runs).c_str(), stdout);
  }
  return kExitOk;
}

int cmd_show(const StoreArgs& args, const std::string& run) {
  auto store = open_existing_store(args.db);
  if (!store) return fail(store.status());
  auto id = resolve_run(**store, run);
  if (!id) return fail(id.status());
  auto info = (*store)->run_info(*id);
  if (!info) return fail(info.status());
  auto trace = (*store)->load_trace(*id);
  if (!trace) return fail(trace.status());
  if (args.json) {
    std::printf("%s\n", trace::run_json(*info, *trace).c_str());
  } else {
    std::fputs(trace::format_show_text(*info, *trace).c_str(), stdout);
  }
  return kExitOk;
}

int cmd_compare(const StoreArgs& args, const std::string& run_a, const std::string& run_b) {
  auto store = open_existing_store(args.db);
  if (!store) return fail(store.status());
  auto id_a = resolve_run(**store, run_a);
  if (!id_a) return fail(id_a.status());
  auto id_b = resolve_run(**store, run_b);
  if (!id_b) return fail(id_b.status());
  auto info_a = (*store)->run_info(*id_a);
  auto info_b = (*store)->run_info(*id_b);
  if (!info_a) return fail(info_a.status());
  if (!info_b) return fail(info_b.status());
  auto a = (*store)->load_trace(*id_a);
  if (!a) return fail(a.status());
  auto b = (*store)->load_trace(*id_b);
  if (!b) return fail(b.status());
  trace::Comparison comparison = trace::compare_runs(*info_a, *a, *info_b, *b);
  if (args.json) {
    std::printf("%s\n", trace::comparison_json(comparison).c_str());
  } else {
    std::fputs(trace::format_comparison_text(comparison, 40).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace sl::cli
