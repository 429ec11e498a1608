#pragma once
// HLO text printer: the output parses back to an equal Module.

#include <string>

#include "core/hlo/module.h"

namespace sl::hlo {

std::string print_module(const Module& module);
std::string print_instruction(const Module& module, const Computation& computation, const Instruction& instruction);

}  // namespace sl::hlo
