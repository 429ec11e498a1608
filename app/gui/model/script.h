#pragma once
// `--script` files (docs/gui.md): one command per line, parsed into the
// same Actions the buttons push, plus two driver steps (wait-frames,
// screenshot) that the frame loop carries out. Blank lines and lines
// starting with '#' are skipped.
//
//   open-run N | set-stream INSTR N|comm | rerun sim|cpu|cuda | compare N
//   zoom START_US END_US | select INSTR | wait-frames N | screenshot FILE
//   fit | search TEXT | close-compare
//   suggest [BUDGET] | apply-suggestion K   (K = 1 is the best suggestion)
//   cancel-rerun | quit   (these two do not wait for a running rerun)
//   measure START_US END_US | clear-measure | search-longest
//   reveal-longest K (K = 1: the longest event) | tab details|statistics|compare|program

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "app/gui/model/action.h"
#include "core/common/status.h"

namespace sl::gui {

struct WaitFrames { int frames = 1; };
struct Screenshot { std::string path; };
struct QuitStep {};  // as File > Quit, at once (a running rerun is cancelled)
using ScriptStep = std::variant<Action, WaitFrames, Screenshot, QuitStep>;

struct ScriptLine {
  int line = 0;        // 1-based line in the script
  ScriptStep step;
};

// kUsage with "FILE:LINE: error: ..." for an unknown command or bad argument.
Result<std::vector<ScriptLine>> parse_script(std::string_view text, std::string_view file_name);
Result<std::vector<ScriptLine>> parse_script_file(const std::string& path);

}  // namespace sl::gui
