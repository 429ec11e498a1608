#include "app/gui/model/script.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/sched/streams.h"

namespace sl::gui {
namespace {

std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> words;
  std::istringstream in{std::string(line)};
  std::string w;
  while (in >> w) words.push_back(w);
  return words;
}

bool parse_int(const std::string& text, int64_t* out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && p == text.data() + text.size();
}

bool parse_double(const std::string& text, double* out) {
  try {
    size_t used = 0;
    *out = std::stod(text, &used);
    return used == text.size() && std::isfinite(*out);
  } catch (...) {
    return false;
  }
}

// The rest of the line after the command word (search text may hold spaces).
std::string rest_of(std::string_view line, const std::string& command) {
  auto pos = line.find(command);
  std::string_view rest = line.substr(pos + command.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t' || rest.back() == '\r')) rest.remove_suffix(1);
  return std::string(rest);
}

}  // namespace

Result<std::vector<ScriptLine>> parse_script(std::string_view text, std::string_view file_name) {
  std::vector<ScriptLine> out;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    std::vector<std::string> w = split_words(line);
    if (w.empty() || w[0][0] == '#') continue;
    auto error = [&](const std::string& what) {
      return usage_error(fmt::format("{}:{}: error: {}", file_name, line_no, what));
    };
    auto need = [&](size_t n, const char* usage) -> Status {
      if (w.size() != n + 1) return error(fmt::format("'{}' takes {}: {}", w[0], n == 1 ? "one argument" : fmt::format("{} arguments", n), usage));
      return ok_status();
    };
    const std::string& cmd = w[0];
    ScriptLine entry;
    entry.line = line_no;
    int64_t n = 0;
    if (cmd == "open-run" || cmd == "compare") {
      SL_RETURN_IF_ERROR(need(1, (cmd + " RUN_ID").c_str()));
      if (!parse_int(w[1], &n) || n <= 0) return error("run id must be a positive integer, not '" + w[1] + "'");
      entry.step = cmd == "open-run" ? Action{OpenRun{n}} : Action{Compare{n}};
    } else if (cmd == "set-stream") {
      SL_RETURN_IF_ERROR(need(2, "set-stream INSTRUCTION STREAM"));
      if (w[2] == "comm") {
        n = sched::kCommStreamBase;
      } else if (!parse_int(w[2], &n) || n < 0 || n > 1000) {
        return error("stream must be a number (0 = main) or 'comm', not '" + w[2] + "'");
      }
      std::string name = w[1][0] == '%' ? w[1].substr(1) : w[1];
      entry.step = Action{SetStream{name, static_cast<int>(n)}};
    } else if (cmd == "rerun") {
      SL_RETURN_IF_ERROR(need(1, "rerun sim|cpu|cuda"));
      if (w[1] != "sim" && w[1] != "cpu" && w[1] != "cuda") return error("backend must be sim, cpu or cuda, not '" + w[1] + "'");
      entry.step = Action{Rerun{w[1]}};
    } else if (cmd == "zoom") {
      SL_RETURN_IF_ERROR(need(2, "zoom START_US END_US"));
      double a = 0, b = 0;
      if (!parse_double(w[1], &a) || !parse_double(w[2], &b)) return error("zoom takes two times in microseconds");
      if (b <= a) return error("zoom needs START_US < END_US");
      entry.step = Action{ZoomTo{static_cast<int64_t>(std::llround(a * 1000)), static_cast<int64_t>(std::llround(b * 1000))}};
    } else if (cmd == "select") {
      SL_RETURN_IF_ERROR(need(1, "select INSTRUCTION"));
      entry.step = Action{SelectInstruction{w[1][0] == '%' ? w[1].substr(1) : w[1]}};
    } else if (cmd == "wait-frames") {
      SL_RETURN_IF_ERROR(need(1, "wait-frames N"));
      if (!parse_int(w[1], &n) || n < 0 || n > 100000) return error("wait-frames takes a frame count (0..100000)");
      entry.step = WaitFrames{static_cast<int>(n)};
    } else if (cmd == "screenshot") {
      if (w.size() < 2) return error("'screenshot' takes a file name: screenshot FILE.png");
      entry.step = Screenshot{rest_of(line, cmd)};
    } else if (cmd == "fit") {
      SL_RETURN_IF_ERROR(need(0, "fit"));
      entry.step = Action{FitAll{}};
    } else if (cmd == "close-compare") {
      SL_RETURN_IF_ERROR(need(0, "close-compare"));
      entry.step = Action{CloseCompare{}};
    } else if (cmd == "suggest") {
      if (w.size() > 2) return error("'suggest' takes at most one argument: suggest [BUDGET]");
      Suggest suggest;
      if (w.size() == 2 && (!parse_int(w[1], &suggest.budget) || suggest.budget < 1)) {
        return error("the budget must be a positive number of simulations, not '" + w[1] + "'");
      }
      entry.step = Action{suggest};
    } else if (cmd == "apply-suggestion") {
      SL_RETURN_IF_ERROR(need(1, "apply-suggestion K"));
      if (!parse_int(w[1], &n) || n < 1 || n > 1000) return error("K must be 1 (the best) or more, not '" + w[1] + "'");
      entry.step = Action{ApplySuggestion{static_cast<int>(n)}};
    } else if (cmd == "cancel-rerun") {
      SL_RETURN_IF_ERROR(need(0, "cancel-rerun"));
      entry.step = Action{CancelRerun{}};
    } else if (cmd == "quit") {
      SL_RETURN_IF_ERROR(need(0, "quit"));
      entry.step = QuitStep{};
    } else if (cmd == "measure") {
      SL_RETURN_IF_ERROR(need(2, "measure START_US END_US"));
      double a = 0, b = 0;
      if (!parse_double(w[1], &a) || !parse_double(w[2], &b)) return error("measure takes two times in microseconds");
      entry.step = Action{SetRange{static_cast<int64_t>(std::llround(a * 1000)), static_cast<int64_t>(std::llround(b * 1000))}};
    } else if (cmd == "clear-measure") {
      SL_RETURN_IF_ERROR(need(0, "clear-measure"));
      entry.step = Action{ClearRange{}};
    } else if (cmd == "search-longest") {
      SL_RETURN_IF_ERROR(need(0, "search-longest"));
      entry.step = Action{SearchLongest{}};
    } else if (cmd == "reveal-longest") {
      SL_RETURN_IF_ERROR(need(1, "reveal-longest K"));
      if (!parse_int(w[1], &n) || n < 1 || n > 100000) return error("K must be 1 (the longest event) or more, not '" + w[1] + "'");
      entry.step = Action{Reveal{-1, static_cast<int>(n)}};
    } else if (cmd == "tab") {
      SL_RETURN_IF_ERROR(need(1, "tab details|statistics|compare|program"));
      if (w[1] != "details" && w[1] != "statistics" && w[1] != "compare" && w[1] != "program") {
        return error("tab must be details, statistics, compare or program, not '" + w[1] + "'");
      }
      entry.step = Action{ShowTab{w[1]}};
    } else if (cmd == "search") {
      if (w.size() < 2) return error("'search' takes the text to look for");
      entry.step = Action{Search{rest_of(line, cmd)}};
    } else {
      return error("unknown command '" + cmd +
                   "' (open-run, set-stream, rerun, compare, zoom, select, wait-frames, screenshot, fit, search, "
                   "close-compare, suggest, apply-suggestion, cancel-rerun, quit, measure, clear-measure, search-longest, "
                   "reveal-longest, tab)");
    }
    out.push_back(std::move(entry));
  }
  return out;
}

Result<std::vector<ScriptLine>> parse_script_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return usage_error("cannot read script " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_script(text.str(), path);
}

}  // namespace sl::gui
