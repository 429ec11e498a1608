#include "app/cli/program_loader.h"

#include <charconv>
#include <cstdio>

#include "app/cli/terminal.h"
#include "app/common/input_file.h"
#include "app/common/kernel_times.h"
#include "core/hlo/parser.h"
#include "core/hlo/verifier.h"

namespace sl::cli {

Result<hlo::Module> load_program(const std::string& path, int64_t replicas, int64_t partitions) {
  SL_ASSIGN_OR_RETURN(std::string text, app::read_input_file(path, app::kMaxProgramBytes, "program"));
  SL_ASSIGN_OR_RETURN(hlo::Module module, hlo::parse_program(text, path));
  hlo::settle_device_counts(module, replicas, partitions);
  for (const std::string& warning : module.warnings) print_text(stderr, warning + "\n");
  SL_RETURN_IF_ERROR(hlo::verify_status(module));
  return module;
}

Result<sched::StreamOverrides> parse_stream_overrides(const std::vector<std::string>& specs) {
  sched::StreamOverrides overrides;
  for (const std::string& spec : specs) {
    size_t eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      return usage_error("--stream expects NAME=N or NAME=comm, got '" + spec + "'");
    }
    std::string name = spec.substr(0, eq);
    if (!name.empty() && name[0] == '%') name.erase(0, 1);
    std::string value = spec.substr(eq + 1);
    int stream = 0;
    if (value == "comm") {
      stream = sched::kCommStreamBase;
    } else {
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), stream);
      if (ec != std::errc() || ptr != value.data() + value.size() || stream < 0 ||
          stream >= sched::kCommStreamBase + 16) {
        return usage_error("--stream " + spec + ": N must be a compute stream 0.." +
                           std::to_string(sched::kCommStreamBase - 1) + ", a communication stream " +
                           std::to_string(sched::kCommStreamBase) + ".." +
                           std::to_string(sched::kCommStreamBase + 15) + " or 'comm'");
      }
    }
    overrides[name] = stream;
  }
  return overrides;
}

Result<sched::LowerOptions> lower_options(const std::vector<std::string>& stream_specs, int64_t replicas,
                                          int64_t partitions, int64_t max_unroll) {
  sched::LowerOptions options;
  SL_ASSIGN_OR_RETURN(options.overrides, parse_stream_overrides(stream_specs));
  options.replica_count = replicas;
  options.num_partitions = partitions;
  if (max_unroll > 0) options.max_thunks = max_unroll;
  return options;
}

Result<std::string> simulated_device(const std::string& device_option, const std::string& db,
                                     const std::string& kernel_times) {
  if (!device_option.empty()) return device_option;
  if (kernel_times.empty()) return std::string("h200");
  Result<app::DeviceOfRun> device = app::device_of_run(db, kernel_times);
  if (!device) {
    return Status(device.status().code(), "--kernel-times " + kernel_times + ": " + device.status().message());
  }
  // The GPU's name comes from the capture file: printed as text, not as terminal controls.
  if (!device->note.empty()) print_text(stderr, device->note + "\n");
  return device->device;
}

}  // namespace sl::cli
