#pragma once
// Verifier (docs/program-format.md): one rule family per opcode family; every error
// points at the offending instruction.

#include <vector>

#include "core/common/status.h"
#include "core/hlo/diagnostic.h"
#include "core/hlo/module.h"

namespace sl::hlo {

std::vector<Diagnostic> verify(const Module& module);

// OK, or kInvalidInput whose message holds every formatted diagnostic.
Status verify_status(const Module& module);

}  // namespace sl::hlo
