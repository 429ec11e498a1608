// Commands that read the database: runs, show, compare.

#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/exit_codes.h"
#include "app/cli/linked_report.h"
#include "app/common/run_ref.h"
#include "app/cli/terminal.h"
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
    std::printf("%s\n", out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    print_text(stdout, trace::format_runs_table(*runs));
  }
  return kExitOk;
}

int cmd_show(const StoreArgs& args, const std::string& run) {
  auto store = open_existing_store(args.db);
  if (!store) return fail(store.status());
  auto loaded = app::load_stored_run(**store, run);
  if (!loaded) return fail(loaded.status());
  if (args.json) {
    std::printf("%s\n", trace::run_json(loaded->info, loaded->trace).c_str());
  } else if (app::is_linked_run(loaded->info)) {
    auto program = (*store)->program_text(loaded->id);
    std::fputs(format_linked_show(loaded->info, loaded->trace, program ? *program : "").c_str(), stdout);
  } else {
    print_text(stdout, trace::format_show_text(loaded->info, loaded->trace));
  }
  return kExitOk;
}

int cmd_compare(const StoreArgs& args, const std::string& run_a, const std::string& run_b) {
  auto store = open_existing_store(args.db);
  if (!store) return fail(store.status());
  auto a = app::load_stored_run(**store, run_a);
  if (!a) return fail(a.status());
  auto b = app::load_stored_run(**store, run_b);
  if (!b) return fail(b.status());
  trace::Comparison comparison = trace::compare_runs(a->info, a->trace, b->info, b->trace);
  if (args.json) {
    std::printf("%s\n", trace::comparison_json(comparison).c_str());
  } else {
    print_text(stdout, trace::format_comparison_text(comparison, 40));
  }
  return kExitOk;
}

}  // namespace sl::cli
