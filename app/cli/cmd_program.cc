// `streamlens check` and `streamlens lower`.

#include <fmt/format.h>

#include <cstdio>

#include "app/common/command_buffer_setup.h"
#include "app/cli/commands.h"
#include "app/cli/exit_codes.h"
#include "app/cli/program_loader.h"
#include "app/cli/terminal.h"
#include "core/sched/lowering.h"

namespace sl::cli {

int cmd_check(const ProgramArgs& args) {
  Result<hlo::Module> module = load_program(args.program, args.replicas, args.partitions);
  if (!module) return fail(module.status());
  size_t instructions = 0;
  for (const hlo::Computation& c : module->computations) instructions += c.instructions.size();
  print_text(stdout, fmt::format("{}: ok (module {}, {} computations, {} instructions, {} replicas x {} partitions)\n",
                                  args.program, module->name, module->computations.size(), instructions,
                                  module->replica_count, module->num_partitions));
  return kExitOk;
}

int cmd_lower(const ProgramArgs& args, int64_t device) {
  Result<hlo::Module> module = load_program(args.program, args.replicas, args.partitions);
  if (!module) return fail(module.status());
  Result<sched::LowerOptions> options = lower_options(args.streams, args.replicas, args.partitions, args.max_unroll);
  if (!options) return fail(options.status());
  Result<sched::LoweredProgram> lowered = sched::lower(*module, *options);
  if (!lowered) return fail(lowered.status());
  for (const std::string& warning : lowered->warnings) print_text(stderr, "warning: " + warning + "\n");
  if (device >= static_cast<int64_t>(lowered->devices.size())) {
    return fail(usage_error("--device-id " + std::to_string(device) + " is out of range (the program has " +
                            std::to_string(lowered->devices.size()) + " devices)"));
  }
  print_text(stdout, sched::format_lowered(*lowered, device));
  // How XLA launches it, when its thunk dump is beside it.
  if (Result<app::CommandBufferInfo> cb = app::command_buffer_setup(args.program, *module, *lowered, "auto"); cb.is_ok()) {
    print_text(stdout, app::command_buffer_text(*cb, *lowered, device < 0 ? 0 : device));
  }
  return kExitOk;
}

}  // namespace sl::cli
