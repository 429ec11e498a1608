// `streamlens link RUN MODULE.txt`: ties a captured run's kernels to the XLA
// module that launched them and splits it into steps (docs/cli.md).

#include <cstdio>
#include <string>

#include "app/cli/commands.h"
#include "app/cli/exit_codes.h"
#include "app/common/run_ref.h"
#include "app/cli/xla_link.h"

namespace sl::cli {

int cmd_link(const LinkArgs& args) {
  auto store = trace::TraceStore::open(args.db, trace::TraceStore::Mode::kOpenExisting);
  if (!store) return fail(store.status());
  auto run = app::load_stored_run(**store, args.run);
  if (!run) return fail(run.status());
  auto linked = link_to_module(run->trace, args.module, args.thunks);
  if (!linked) return fail(linked.status());
  if (linked->summary.steps.empty()) {
    return fail(invalid_input("no execution of module " + linked->module_name + " was found in run " +
                              std::to_string(run->id) + " (is it a capture of the program that XLA dumped?)"));
  }
  trace::RunInfo info = run->info;
  info.name = args.name.empty() ? run->info.name + " (linked to " + linked->module_name + ")" : args.name;
  auto id = save_linked_run(**store, info, *linked, run->trace, run->id);
  if (!id) return fail(id.status());
  std::printf("linked run %lld to %s as run %lld: %s\n", static_cast<long long>(run->id), args.module.c_str(),
              static_cast<long long>(*id), link_summary_line(*linked).c_str());
  return kExitOk;
}

}  // namespace sl::cli
