#pragma once
// Text bound for a terminal: names come from programs, databases and imported
// traces, and an escape sequence in one must not reach the terminal raw
// (it could retitle the window, hide output or worse).

#include <cstdio>
#include <string>
#include <string_view>

namespace sl::cli {

// Control characters (C0 except newline and tab, DEL, and UTF-8-encoded C1)
// become \xNN; everything else is kept byte for byte.
std::string escape_controls(std::string_view text);

// Writes `text` to `f`, escaped when `f` is a terminal, as is when piped.
void print_text(std::FILE* f, std::string_view text);

}  // namespace sl::cli
