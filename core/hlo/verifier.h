#pragma once
// Verifier (docs/program-format.md): one rule family per opcode family; every error
// points at the offending instruction.

#include <vector>

#include "core/common/status.h"
#include "core/hlo/diagnostic.h"
#include "core/hlo/module.h"

namespace sl::hlo {

std::vector<Diagnostic> verify(const Module& module);

// Device counts, settled before verification (docs/program-format.md): `replicas`
// and `partitions` (from --replicas/--partitions; 0 = not given) replace the
// header's counts. A count that neither the header nor the caller declares is
// inferred as the smallest one the replica groups and source_target_pairs
// need (partitions for cross-partition and flattened-id collectives, replicas
// otherwise), with a note appended to module.warnings. Returns the notes.
std::vector<std::string> settle_device_counts(Module& module, int64_t replicas, int64_t partitions);

// OK, or kInvalidInput whose message holds every formatted diagnostic.
Status verify_status(const Module& module);

}  // namespace sl::hlo
