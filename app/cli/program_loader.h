#pragma once
// Shared steps of check/lower/run/suggest: read, parse, verify, parse --stream,
// pick the simulated device.

#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/hlo/module.h"
#include "core/sched/lowering.h"

namespace sl::cli {

// Parses, settles the device counts (`replicas`/`partitions` from the command
// line, 0 = the module's; inferred where nothing declares them), verifies.
// Warnings (unknown attributes) and notes (inferred counts) go to stderr.
Result<hlo::Module> load_program(const std::string& path, int64_t replicas = 0, int64_t partitions = 0);

// "NAME=N" or "NAME=comm" -> overrides; malformed entries are usage errors.
Result<sched::StreamOverrides> parse_stream_overrides(const std::vector<std::string>& specs);

// Lower options from the command line (overrides, replica/partition counts,
// the unrolling cap; 0 = the default).
Result<sched::LowerOptions> lower_options(const std::vector<std::string>& stream_specs, int64_t replicas,
                                          int64_t partitions, int64_t max_unroll = 0);

// The device file a simulation takes: `--device` where given, else the
// stock file of the GPU the `--kernel-times` capture ran on (its note goes
// to stderr), else h200.
Result<std::string> simulated_device(const std::string& device_option, const std::string& db,
                                     const std::string& kernel_times);

}  // namespace sl::cli
