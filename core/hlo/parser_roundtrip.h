#pragma once
// Structural comparison of two modules, for printer round trips (tests and
// the parser fuzzer): names, opcodes, shapes with their layouts, operands, typed attributes and
// called computations. Source locations, raw literal text and warnings are
// not compared.

#include <string>

#include "core/hlo/module.h"

namespace sl::hlo {

// Empty when the modules are equal; otherwise the first difference, e.g.
// "computation %main instruction %x: operands differ".
std::string module_difference(const Module& a, const Module& b);

}  // namespace sl::hlo
