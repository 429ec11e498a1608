// HLO text parser: the stack-frame tables current XLA prints between the
// module header and the first computation (FileNames, FunctionNames,
// FileLocations, StackFrames), and the `metadata={...}` attribute whose
// stack_frame_id points into them.

#include <fmt/format.h>

#include "core/hlo/parser_impl.h"

namespace sl::hlo::parser_internal {

bool Parser::parse_string_table(std::vector<std::string>& out) {
  // `N "text"` rows; ids are 1-based and consecutive in XLA's output.
  while (is(TokenKind::kInt)) {
    int64_t id = 0;
    SourceLoc loc = cur_.loc;
    if (!parse_int(id)) return false;
    if (id != static_cast<int64_t>(out.size()) + 1) {
      return fail(loc, fmt::format("table row {} is out of order (expected {})", id, out.size() + 1));
    }
    if (!is(TokenKind::kString)) return fail_expected("a quoted string after the table row number");
    out.emplace_back(cur_.value);
    advance();
  }
  return true;
}

bool Parser::parse_table_row(std::string_view table, size_t expected_id,
                             const std::vector<std::pair<std::string_view, int64_t*>>& fields) {
  SourceLoc loc = cur_.loc;
  int64_t id = 0;
  if (!parse_int(id)) return false;
  if (id != static_cast<int64_t>(expected_id)) {
    return fail(loc, fmt::format("{} row {} is out of order (expected {})", table, id, expected_id));
  }
  if (!expect(TokenKind::kLbrace, fmt::format("'{{' to open {} row {}", table, id))) return false;
  while (!accept(TokenKind::kRbrace)) {
    accept(TokenKind::kComma);
    if (!is(TokenKind::kIdent)) return fail_expected(fmt::format("a field name in {} row {}", table, id));
    std::string_view name = cur_.text;
    SourceLoc name_loc = cur_.loc;
    advance();
    if (!expect(TokenKind::kEquals, "'=' after the field name")) return false;
    int64_t* slot = nullptr;
    for (const auto& [field, target] : fields) {
      if (field == name) slot = target;
    }
    if (!slot) {
      // A field a newer XLA added: read past it rather than refuse the dump.
      warn_unknown_attribute(name_loc, fmt::format("{}.{}", table, name));
      if (!skip_one_value()) return false;
      continue;
    }
    if (!parse_int(*slot)) return false;
  }
  return true;
}

bool Parser::parse_stack_frame_tables() {
  if (!is_ident("FileNames")) return true;
  advance();
  StackFrameTables& t = module_.stack_frames;
  if (!parse_string_table(t.file_names)) return false;
  if (!is_ident("FunctionNames")) return fail_expected("'FunctionNames' after the FileNames table");
  advance();
  if (!parse_string_table(t.function_names)) return false;
  if (!is_ident("FileLocations")) return fail_expected("'FileLocations' after the FunctionNames table");
  advance();
  while (is(TokenKind::kInt)) {
    StackFrameTables::Location& l = t.locations.emplace_back();
    if (!parse_table_row("FileLocations", t.locations.size(),
                         {{"file_name_id", &l.file_id},
                          {"function_name_id", &l.function_id},
                          {"line", &l.line},
                          {"end_line", &l.end_line},
                          {"column", &l.column},
                          {"end_column", &l.end_column}})) {
      return false;
    }
  }
  if (!is_ident("StackFrames")) return fail_expected("'StackFrames' after the FileLocations table");
  advance();
  while (is(TokenKind::kInt)) {
    StackFrameTables::Frame& f = t.frames.emplace_back();
    int64_t parent_plus_one = 0;
    if (!parse_table_row("StackFrames", t.frames.size(),
                         {{"file_location_id", &f.location_id}, {"parent_frame_id", &parent_plus_one}})) {
      return false;
    }
    // XLA prints the parent id plus one (its printer and parser agree on
    // that): 1 means no parent, N+1 means frame N.
    f.parent_frame_id = parent_plus_one > 0 ? parent_plus_one - 1 : 0;
  }
  return check_stack_frame_ids();
}

bool Parser::check_stack_frame_ids() {
  const StackFrameTables& t = module_.stack_frames;
  auto bad = [](int64_t id, size_t size, bool zero_ok) {
    return id < (zero_ok ? 0 : 1) || id > static_cast<int64_t>(size);
  };
  for (size_t i = 0; i < t.locations.size(); ++i) {
    const StackFrameTables::Location& l = t.locations[i];
    if (bad(l.file_id, t.file_names.size(), false) || bad(l.function_id, t.function_names.size(), false)) {
      return fail(prev_.loc, fmt::format("FileLocations row {} names a file or function that is not in the tables",
                                         i + 1));
    }
  }
  for (size_t i = 0; i < t.frames.size(); ++i) {
    const StackFrameTables::Frame& f = t.frames[i];
    if (bad(f.location_id, t.locations.size(), false) || bad(f.parent_frame_id, t.frames.size(), true)) {
      return fail(prev_.loc, fmt::format("StackFrames row {} names a location or parent that is not in the tables",
                                         i + 1));
    }
  }
  return true;
}

bool Parser::parse_metadata(Instruction& inst) {
  // A malformed value is most often unbalanced: report that (as skipping it
  // would) rather than the first odd field, by re-reading it as brackets.
  if (!is(TokenKind::kLbrace)) return fail_expected("'{' to open metadata");
  const Lexer::State saved = lexer_.state();
  const Token open = cur_;
  const size_t errors = errors_.size();
  if (parse_metadata_fields(inst.metadata)) return true;
  Diagnostic first = errors_.back();
  errors_.resize(errors);
  lexer_.restore(saved);
  cur_ = open;
  if (skip_balanced()) errors_.push_back(std::move(first));
  return false;
}

bool Parser::parse_metadata_fields(OpMetadata& m) {
  // `{op_type="..." op_name="..." source_file="..." source_line=N
  // stack_frame_id=N deduplicated_name="..." ...}`: space separated; other
  // keys (scheduling_name, profile_type, source_end_line...) are read past.
  advance();  // '{'
  while (!accept(TokenKind::kRbrace)) {
    accept(TokenKind::kComma);
    if (!is(TokenKind::kIdent)) return fail_expected("a metadata field name");
    std::string_view key = cur_.text;
    advance();
    if (!expect(TokenKind::kEquals, "'=' after the metadata field name")) return false;
    std::string* text = key == "op_type" ? &m.op_type : key == "op_name" ? &m.op_name
                        : key == "source_file"       ? &m.source_file
                        : key == "deduplicated_name" ? &m.deduplicated_name
                                                     : nullptr;
    int64_t* number = key == "source_line" ? &m.source_line : key == "stack_frame_id" ? &m.stack_frame_id : nullptr;
    if (text) {
      if (!is(TokenKind::kString)) return fail_expected(fmt::format("a quoted string for metadata {}", key));
      *text = cur_.value;
      advance();
    } else if (number) {
      SourceLoc loc = cur_.loc;
      if (!parse_int(*number)) return false;
      if (key == "stack_frame_id" &&
          (*number < 0 || *number > static_cast<int64_t>(module_.stack_frames.frames.size()))) {
        return fail(loc, fmt::format("stack_frame_id {} is not in the StackFrames table ({} frames)", *number,
                                     module_.stack_frames.frames.size()));
      }
    } else if (!skip_one_value()) {
      return false;
    }
  }
  return true;
}

}  // namespace sl::hlo::parser_internal
