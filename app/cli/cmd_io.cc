// Moving runs in and out of the database: export, import.

#include <cstdio>

#include "app/cli/commands.h"
#include "app/cli/exit_codes.h"
#include "app/cli/output_guard.h"
#include "app/common/run_ref.h"
#include "app/cli/store_access.h"
#include "core/trace/export.h"
#include "core/trace/store/nsys_import.h"
#include "core/trace/store/trace_store.h"

namespace sl::cli {

int cmd_export(const StoreArgs& args, const std::string& run, const std::string& format, const std::string& out) {
  auto parsed_format = trace::parse_export_format(format);
  if (!parsed_format) return fail(parsed_format.status());
  Status safe = refuse_overwrite(out, args.db, {});
  if (!safe.is_ok()) return fail(safe);
  auto store = trace::TraceStore::open(args.db, trace::TraceStore::Mode::kReadOnly);
  if (!store) return fail(store.status());
  auto loaded = app::load_stored_run(**store, run);
  if (!loaded) return fail(loaded.status());
  Status written = trace::export_run(loaded->info, loaded->trace, *parsed_format, out);
  if (!written.is_ok()) return fail(written);
  std::printf("wrote run %lld (%zu events) to %s\n", static_cast<long long>(loaded->id), loaded->trace.events.size(),
              out.c_str());
  return kExitOk;
}

int cmd_import(const StoreArgs& args, const std::string& nsys_file, const std::string& name) {
  auto imported = trace::import_nsys_sqlite(nsys_file);
  if (!imported) return fail(imported.status());
  Status safe = refuse_overwrite(args.db, nsys_file, {});  // importing a database into itself
  if (!safe.is_ok()) return fail(safe);
  auto store = open_store_for_writing(args.db);
  if (!store) return fail(store.status());
  trace::RunInfo info = imported->info;
  if (!name.empty()) info.name = name;
  if (info.name.empty()) info.name = "nsys import of " + nsys_file;
  auto id = (*store)->save_run(info, "", {}, imported->trace);
  if (!id) return fail(id.status());
  for (const trace::Counter& c : imported->trace.counters) {
    if (c.value != 0) std::fprintf(stderr, "note: %s = %lld (%s)\n", c.name.c_str(), static_cast<long long>(c.value),
                                   c.description.c_str());
  }
  std::printf("imported %s as run %lld (%zu events)\n", nsys_file.c_str(), static_cast<long long>(*id),
              imported->trace.events.size());
  return kExitOk;
}

}  // namespace sl::cli
