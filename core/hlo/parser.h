#pragma once
// Front door of the HLO text parser (docs/program-format.md). The token stream,
// attribute grammar and error recovery live in parser.cc and friends.

#include <string>
#include <string_view>

#include "core/common/status.h"
#include "core/hlo/module.h"

namespace sl::hlo {

// Parses a whole module. On error the Status (kInvalidInput) message is one or
// more formatted diagnostics ("FILE:LINE:COL: error: ..." + line + caret).
// Warnings (unknown attributes) land in Module::warnings.
Result<Module> parse_program(std::string_view text, std::string_view file_name);

// Reads the file and parses it; a missing or unreadable file is kInvalidInput.
Result<Module> parse_program_file(const std::string& path);

}  // namespace sl::hlo
