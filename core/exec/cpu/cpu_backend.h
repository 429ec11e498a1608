#pragma once
// The CPU reference backend (docs/architecture.md): exact XLA numerics for every
// supported op on every device of the program, one thread per device.
// Timestamps are host times, meaningful for ordering only.

#include <cstdint>
#include <memory>

#include "core/common/status.h"
#include "core/exec/backend.h"
#include "core/hlo/module.h"

namespace sl::exec {

// Backend::run interprets program.module directly (the thunks are not
// needed); it uses program.replica_count and program.num_partitions.
std::unique_ptr<Backend> make_cpu_backend();

// The same without lowering. `replicas`/`partitions` <= 0 take the module's.
Result<RunOutput> run_cpu(const hlo::Module& module, int64_t replicas, int64_t partitions,
                          const RunOptions& options);

// Parameter values for device `device` (docs/program-format.md, `--init`), one per
// entry parameter; tuple parameters get every leaf initialised alike.
std::vector<Literal> init_parameter_leaves(const hlo::Shape& shape, const RunOptions& options, int64_t device,
                                           int64_t parameter);

}  // namespace sl::exec
