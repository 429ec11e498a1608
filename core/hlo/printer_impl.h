#pragma once
// Internals of the HLO printer (not a public header: use printer.h): the
// attribute families and module tables printed by printer_attributes.cc.

#include <string>

#include "core/hlo/module.h"

namespace sl::hlo::printer_internal {

// `, offset_dims={..}, window={..}, padding=.., metadata={..}, ...`: the
// typed attributes of the opcode families past the basic ones, then the
// attributes kept verbatim.
void print_extra_attributes(const Computation& computation, const Instruction& instruction, std::string& out);

// The FileNames / FunctionNames / FileLocations / StackFrames tables, with
// a blank line before each; empty when the module has none.
std::string print_stack_frame_tables(const Module& module);

}  // namespace sl::hlo::printer_internal
