#include "core/xla/thunk_sequence.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <filesystem>

#include "core/xla/dump_file.h"

namespace sl::xla {
namespace {

// A thunk dump of a real step is a few hundred lines; this keeps a wrong file
// from being read whole.
constexpr std::uintmax_t kMaxDumpBytes = 64u << 20;

struct Line {
  int number = 0;
  int indent = 0;
  std::string_view text;  // without the indentation
};

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> out;
  int number = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos) {
      std::string_view body = line.substr(first);
      size_t last = body.find_last_not_of(" \t");
      out.push_back({number, static_cast<int>(first), body.substr(0, last + 1)});
    }
    if (end == text.size()) break;
    pos = end + 1;
  }
  return out;
}

bool parse_int(std::string_view s, int& out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// "prev=003 (1)" -> 3; "source" / "sink" -> none.
void parse_edge(std::string_view part, std::string_view key, std::vector<int>& out) {
  size_t at = part.find(key);
  if (at == std::string_view::npos) return;
  std::string_view rest = part.substr(at + key.size());
  size_t end = 0;
  while (end < rest.size() && std::isdigit(static_cast<unsigned char>(rest[end]))) ++end;
  int id = 0;
  if (end > 0 && parse_int(rest.substr(0, end), id)) out.push_back(id);
}

bool is_label(std::string_view text) { return text == "condition:" || text == "body:"; }

// "NNN: kKind ..." -> the thunk, or false when the line is not of that form.
bool parse_thunk_line(const Line& line, Thunk& thunk) {
  std::string_view t = line.text;
  size_t colon = t.find(':');
  if (colon == std::string_view::npos || colon == 0 || !parse_int(t.substr(0, colon), thunk.id)) return false;
  t.remove_prefix(colon + 1);
  t.remove_prefix(std::min(t.find_first_not_of(' '), t.size()));
  size_t kind_end = t.find_first_of(" [");
  thunk.kind = std::string(t.substr(0, kind_end));
  if (thunk.kind.size() < 2 || thunk.kind[0] != 'k') return false;
  thunk.line = line.number;
  std::string_view rest = kind_end == std::string_view::npos ? std::string_view{} : t.substr(kind_end);
  size_t open = rest.find('[');
  size_t close = rest.find(']');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
    std::string_view edges = rest.substr(open + 1, close - open - 1);
    size_t bar = edges.find('|');
    std::string_view before = edges.substr(0, bar);
    std::string_view after = bar == std::string_view::npos ? std::string_view{} : edges.substr(bar + 1);
    parse_edge(before, "prev=", thunk.prev);
    parse_edge(after, "next=", thunk.next);
    rest = rest.substr(close + 1);
  }
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  if (thunk.kind == "kCustomKernel" || thunk.kind == "kKernel") {
    thunk.kernel = std::string(rest.substr(0, rest.find(' ')));
  }
  if (size_t s = rest.find("stream="); s != std::string_view::npos) {
    std::string_view v = rest.substr(s + 7);
    thunk.stream = std::string(v.substr(0, v.find_first_of(", ")));
  }
  if (size_t a = rest.find("async_id="); a != std::string_view::npos) {
    std::string_view v = rest.substr(a + 9);
    size_t end = 0;
    while (end < v.size() && std::isdigit(static_cast<unsigned char>(v[end]))) ++end;
    int id = 0;
    if (parse_int(v.substr(0, end), id)) thunk.async_id = id;
  }
  return true;
}

class BlockParser {
 public:
  BlockParser(const std::vector<Line>& lines, std::string_view file) : lines_(lines), file_(file) {}

  Status parse(std::vector<Thunk>& out) {
    if (lines_.empty()) return ok_status();
    return parse_block(lines_[0].indent, out, 0);
  }

 private:
  // Thunks at exactly `indent`, each followed by its deeper blocks.
  Status parse_block(int indent, std::vector<Thunk>& out, int depth) {
    if (depth > 64) return error(lines_[pos_], "thunks nest deeper than 64 levels");
    while (pos_ < lines_.size()) {
      const Line& line = lines_[pos_];
      if (is_label(line.text)) return ok_status();  // belongs to an enclosing while
      if (line.indent < indent) return ok_status();
      if (line.indent > indent) return error(line, "indented line without a thunk above it");
      Thunk thunk;
      if (!parse_thunk_line(line, thunk)) return error(line, "expected a thunk 'NNN: kKind ...'");
      ++pos_;
      if (Status s = parse_children(thunk, indent, depth); !s.is_ok()) return s;
      out.push_back(std::move(thunk));
    }
    return ok_status();
  }

  Status parse_children(Thunk& thunk, int indent, int depth) {
    while (pos_ < lines_.size()) {
      const Line& line = lines_[pos_];
      if (is_label(line.text)) {
        // A while's labels sit at or just right of its own indentation.
        if (thunk.kind != "kWhile" || line.indent < indent) return ok_status();
        std::vector<Thunk>& target = line.text == "condition:" ? thunk.condition : thunk.body;
        ++pos_;
        if (pos_ >= lines_.size() || is_label(lines_[pos_].text) || lines_[pos_].indent <= line.indent) continue;
        if (Status s = parse_block(lines_[pos_].indent, target, depth + 1); !s.is_ok()) return s;
        continue;
      }
      if (line.indent <= indent) return ok_status();
      if (Status s = parse_block(line.indent, thunk.nested, depth + 1); !s.is_ok()) return s;
    }
    return ok_status();
  }

  Status error(const Line& line, std::string_view message) const {
    return invalid_input(fmt::format("{}:{}: error: {}", file_, line.number, message));
  }

  const std::vector<Line>& lines_;
  std::string_view file_;
  size_t pos_ = 0;
};

bool any_command_buffer(const std::vector<Thunk>& thunks) {
  for (const Thunk& t : thunks) {
    if (t.kind == "kCommandBuffer") return true;
    if (any_command_buffer(t.nested) || any_command_buffer(t.condition) || any_command_buffer(t.body)) return true;
  }
  return false;
}

}  // namespace

Result<ThunkSequence> parse_thunk_sequence(std::string_view text, std::string_view file_name) {
  std::vector<Line> lines = split_lines(text);
  ThunkSequence out;
  BlockParser parser(lines, file_name);
  if (Status s = parser.parse(out.thunks); !s.is_ok()) return s;
  out.has_command_buffers = any_command_buffer(out.thunks);
  return out;
}

Result<ThunkSequence> read_thunk_sequence(const std::string& path) {
  auto text = read_dump_file(path, kMaxDumpBytes, "a thunk dump");
  if (!text) return text.status();
  return parse_thunk_sequence(*text, path);
}

std::string thunk_sequence_path_for(const std::string& module_path, bool after_passes) {
  // XLA names every file of one module `module_NNNN.NAME.<what>.txt`.
  std::filesystem::path p(module_path);
  std::string file = p.filename().string();
  size_t first = file.find('.');
  size_t second = first == std::string::npos ? std::string::npos : file.find('.', first + 1);
  if (second == std::string::npos) return {};
  std::filesystem::path candidate =
      p.parent_path() /
      (file.substr(0, second) + (after_passes ? ".thunk_sequence_after_thunk_passes.txt" : ".thunk_sequence.txt"));
  std::error_code ec;
  return std::filesystem::is_regular_file(candidate, ec) ? candidate.string() : std::string{};
}

}  // namespace sl::xla
