#pragma once
// `--results FILE.json` (docs/program-format.md):
// {"devices":[{"device":g,"replica":r,"partition":q,
//              "outputs":[{"shape":"f32[4,2]","values":[...]}]}]}
// Values are row-major JSON numbers: integers for pred (0/1) and integer
// types, shortest round-trip decimals for floats. JSON has no NaN or
// infinity, so those are written as the strings "nan", "inf" and "-inf".

#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/exec/backend.h"

namespace sl::exec {

std::string results_to_json(const std::vector<DeviceResults>& results);

// Reads the format back (tests, comparing a cuda run with a cpu run).
Result<std::vector<DeviceResults>> results_from_json(const std::string& text);

}  // namespace sl::exec
