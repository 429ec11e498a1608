#pragma once
// Which trace EventKind an instruction's work is drawn as; shared by every
// backend so the same program looks the same on cpu, sim and cuda.

#include "core/hlo/module.h"
#include "core/trace/trace.h"

namespace sl::exec {

trace::EventKind event_kind_of(const hlo::Instruction& instruction);

}  // namespace sl::exec
