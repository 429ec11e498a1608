// HLO text parser: module, computation and instruction structure. Values
// (shapes, literals, lists) are in parser_values.cc, attributes in
// parser_attributes.cc, backend_config JSON in parser_backend_config.cc.

#include "core/hlo/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/huge_pages.h"
#include "core/hlo/parser_impl.h"

namespace sl::hlo {
namespace parser_internal {

Parser::Parser(std::string_view text, std::string_view file_name) : lexer_(text), text_(text) {
  module_.file_name = std::string(file_name);
  module_.source_text = std::string(text);
}

void Parser::advance() {
  prev_ = std::move(cur_);
  cur_ = lexer_.next();
}

bool Parser::accept(TokenKind kind) {
  if (cur_.kind != kind) return false;
  advance();
  return true;
}

bool Parser::expect(TokenKind kind, std::string_view what) {
  if (accept(kind)) return true;
  return fail_expected(what);
}

bool Parser::fail(SourceLoc loc, std::string message) {
  Diagnostic d;
  d.severity = Severity::kError;
  d.file = module_.file_name;
  d.loc = loc;
  d.message = std::move(message);
  errors_.push_back(std::move(d));
  return false;
}

bool Parser::fail_here(std::string message) { return fail(cur_.loc, std::move(message)); }

bool Parser::fail_expected(std::string_view what) {
  if (cur_.kind == TokenKind::kError) return fail_here(std::string(cur_.value));
  if (cur_.kind == TokenKind::kEof) return fail_here(fmt::format("expected {}, got end of file", what));
  std::string_view shown = cur_.text.substr(0, 40);
  return fail_here(fmt::format("expected {}, got '{}'", what, shown));
}

void Parser::warn(SourceLoc loc, std::string message) {
  Diagnostic d;
  d.severity = Severity::kWarning;
  d.file = module_.file_name;
  d.loc = loc;
  d.message = std::move(message);
  warnings_.push_back(std::move(d));
  warning_counts_.push_back(1);
}

void Parser::warn_unknown_attribute(SourceLoc loc, std::string_view name) {
  // Few distinct names per module: a linear scan, and no allocation for the
  // repeats that make up most calls.
  for (const auto& [seen, index] : warned_attributes_) {
    if (seen == name) {
      ++warning_counts_[index];
      return;
    }
  }
  warned_attributes_.emplace_back(std::string(name), warnings_.size());
  warn(loc, fmt::format("unknown attribute '{}' kept as written", name));
}

Token Parser::peek_next() {
  Lexer::State saved = lexer_.state();
  Token t = lexer_.next();
  lexer_.restore(saved);
  return t;
}

size_t Parser::estimate_instructions(size_t body_begin, int body_line) {
  // One instruction per line up to the next `}` at the start of a line (XLA
  // prints one instruction per line), capped by the bytes so that blank-line
  // garbage cannot reserve much. The index only moves forward: linear overall.
  if (close_lines_.empty() && !closes_scanned_) {
    closes_scanned_ = true;
    int line = 1;
    for (size_t i = text_.find('\n'); i != std::string_view::npos; i = text_.find('\n', i + 1)) {
      ++line;
      if (i + 1 < text_.size() && text_[i + 1] == '}') close_lines_.push_back({i + 1, line});
    }
  }
  while (next_close_ < close_lines_.size() && close_lines_[next_close_].offset < body_begin) ++next_close_;
  size_t end = next_close_ < close_lines_.size() ? close_lines_[next_close_].offset : text_.size();
  int end_line = next_close_ < close_lines_.size() ? close_lines_[next_close_].line : body_line;
  size_t lines = end_line > body_line ? static_cast<size_t>(end_line - body_line) : 1;
  return std::min(lines, (end - body_begin) / 32 + 1);
}

Result<Module> Parser::run() {
  advance();
  bool ok = true;
  if (is_ident("HloModule")) ok = parse_header();
  if (ok) ok = parse_stack_frame_tables();
  while (ok && !is(TokenKind::kEof)) ok = parse_computation();
  if (ok && module_.computations.empty()) ok = fail_here("expected a computation: the module is empty");
  if (ok) ok = resolve_calls();
  if (ok) ok = check_call_cycles();
  if (!errors_.empty()) return invalid_input(format_diagnostics(errors_, text_));

  if (module_.entry < 0 && !entry_name_.empty()) {
    auto it = computation_names_.find(entry_name_);
    if (it == computation_names_.end()) {
      fail(entry_name_loc_, fmt::format("entry_computation_name names no computation: %{}", entry_name_));
      return invalid_input(format_diagnostics(errors_, text_));
    }
    module_.entry = it->second;
    module_.computations[static_cast<size_t>(it->second)].is_entry = true;
  }
  if (module_.entry < 0) {
    module_.entry = static_cast<int>(module_.computations.size()) - 1;
    module_.computations.back().is_entry = true;
  }
  for (size_t i = 0; i < warnings_.size(); ++i) {
    if (warning_counts_[i] > 1) warnings_[i].message += fmt::format(" ({} occurrences)", warning_counts_[i]);
    module_.warnings.push_back(format_diagnostic(warnings_[i], text_));
  }
  return std::move(module_);
}

bool Parser::parse_header() {
  advance();  // HloModule
  if (!is(TokenKind::kIdent) && !is(TokenKind::kName) && !is(TokenKind::kString)) {
    return fail_expected("a module name after HloModule");
  }
  module_.name = std::string(is(TokenKind::kString) ? cur_.value : cur_.text);
  advance();
  accept(TokenKind::kColon);  // XLA's parser takes `HloModule name:` too (its tests write it)
  while (accept(TokenKind::kComma)) {
    if (!is(TokenKind::kIdent)) return fail_expected("a module attribute name");
    std::string_view name = cur_.text;
    advance();
    if (!expect(TokenKind::kEquals, "'=' after the module attribute name")) return false;
    if (!parse_header_attribute(name)) return false;
  }
  // Backends keep per-device state; a typo such as replica_count=8000000000
  // must not become an allocation failure later.
  constexpr int64_t kMaxDevices = 65536;
  int64_t devices = 0;
  if (__builtin_mul_overflow(module_.replica_count, module_.num_partitions, &devices) || devices > kMaxDevices) {
    return fail(prev_.loc, fmt::format("replica_count * num_partitions = {} * {} exceeds the {} devices supported",
                                       module_.replica_count, module_.num_partitions, kMaxDevices));
  }
  return true;
}

bool Parser::parse_header_attribute(std::string_view name) {
  if (name == "replica_count" || name == "num_partitions") {
    SourceLoc loc = cur_.loc;
    int64_t value = 0;
    if (!parse_int(value)) return false;
    if (value < 1) return fail(loc, fmt::format("{} must be at least 1, got {}", name, value));
    const bool replicas = name == "replica_count";
    (replicas ? module_.replica_count : module_.num_partitions) = value;
    (replicas ? module_.replica_count_declared : module_.num_partitions_declared) = true;
    return true;
  }
  if (name == "is_scheduled") return parse_bool(module_.is_scheduled);
  if (name == "entry_computation_name") {
    // Not written by XLA's printer, but a way to pick the entry without ENTRY.
    if (!is(TokenKind::kString) && !is(TokenKind::kIdent) && !is(TokenKind::kName)) {
      return fail_expected("the entry computation's name");
    }
    entry_name_ = std::string(is(TokenKind::kString) ? cur_.value : cur_.text);
    entry_name_loc_ = cur_.loc;
    advance();
    return true;
  }
  // entry_computation_layout, input_output_alias, frontend_attributes, ...:
  // the layouts and aliasing do not change what the program computes here.
  return skip_value();
}

bool Parser::parse_computation() {
  bool is_entry = false;
  SourceLoc entry_loc = cur_.loc;
  if (is_ident("ENTRY")) {
    is_entry = true;
    advance();
  }
  if (!is(TokenKind::kName) && !is(TokenKind::kIdent)) return fail_expected("a computation name");
  Computation computation;
  computation.name = std::string(cur_.text);
  computation.loc = cur_.loc;
  computation.is_entry = is_entry;
  advance();
  if (is(TokenKind::kLparen) && !parse_signature(computation)) return false;
  if (!expect(TokenKind::kLbrace, "'{' to open the computation body")) return false;
  if (computation_names_.count(computation.name)) {
    return fail(computation.loc, fmt::format("duplicate computation name %{}", computation.name));
  }
  if (is_entry && module_.entry >= 0) {
    return fail(entry_loc, fmt::format("second ENTRY computation (the first is %{})",
                                       module_.computations[static_cast<size_t>(module_.entry)].name));
  }

  std::unordered_map<std::string_view, int> names;
  std::vector<PendingOperand> pending;
  pending_controls_.clear();
  size_t expected = estimate_instructions(prev_.end, prev_.loc.line);
  reserve_huge(computation.instructions, expected);
  names.reserve(expected);
  while (!is(TokenKind::kRbrace)) {
    if (is(TokenKind::kEof)) {
      return fail_here(fmt::format("expected '}}' to close computation %{}, got end of file", computation.name));
    }
    if (!parse_instruction(computation, names, pending)) return false;
  }
  advance();  // '}'
  // XLA may follow the body with `, execution_thread="..."`.
  while (accept(TokenKind::kComma)) {
    if (!is(TokenKind::kIdent)) return fail_expected("a computation attribute name");
    advance();
    if (!expect(TokenKind::kEquals, "'=' after the computation attribute name") || !skip_value()) return false;
  }
  if (!finish_computation(computation, names, pending)) return false;

  int index = static_cast<int>(module_.computations.size());
  computation_names_.emplace(computation.name, index);
  if (is_entry) module_.entry = index;
  module_.computations.push_back(std::move(computation));
  return true;
}

bool Parser::parse_signature(Computation& computation) {
  advance();  // '('
  std::vector<Shape> parameters;
  if (!accept(TokenKind::kRparen)) {
    for (;;) {
      if (!is(TokenKind::kName) && !is(TokenKind::kIdent)) return fail_expected("a parameter name");
      advance();
      if (!expect(TokenKind::kColon, "':' after the parameter name")) return false;
      Shape shape;
      if (!parse_shape(shape, 0)) return false;
      parameters.push_back(std::move(shape));
      if (accept(TokenKind::kComma)) continue;
      if (!expect(TokenKind::kRparen, "',' or ')' in the computation signature")) return false;
      break;
    }
  }
  if (!expect(TokenKind::kArrow, "'->' after the computation parameters")) return false;
  Shape result;
  if (!parse_shape(result, 0, /*before_body=*/true)) return false;
  computation.declared_parameters = std::move(parameters);
  computation.declared_result = std::move(result);
  return true;
}

bool Parser::parse_instruction(Computation& computation, std::unordered_map<std::string_view, int>& names,
                               std::vector<PendingOperand>& pending) {
  // Built in place: instructions are large, and moving each one into the
  // vector was a fifth of the parse time on big modules.
  int index = static_cast<int>(computation.instructions.size());
  Instruction* built = &computation.instructions.emplace_back();
  if (is_ident("ROOT")) {
    built->is_root = true;
    advance();
  }
  if (!is(TokenKind::kName) && !is(TokenKind::kIdent)) return fail_expected("an instruction name");
  std::string_view name = cur_.text;
  built->name = std::string(name);
  built->loc = cur_.loc;
  advance();
  if (!expect(TokenKind::kEquals, "'=' after the instruction name")) return false;
  current_instruction_ = index;
  // XLA writes every result shape, but its parser lets many opcodes leave it
  // out (`%s = add(%a, %b)`); those are inferred once the attributes are read.
  // An opcode is never followed by '[', so `f33[4]` still reads as a shape.
  const bool has_shape =
      is(TokenKind::kLparen) || (is(TokenKind::kIdent) && peek_next().kind == TokenKind::kLbracket);
  if (has_shape && !parse_shape(built->shape, 0)) return false;
  if (!parse_opcode_token(*built)) return false;

  computation_ = &computation;
  if (!parse_operands(*built, index, names, pending)) return false;
  if (!nested_.empty()) {
    materialize_nested(computation, pending, index);
    built = &computation.instructions.back();
    current_instruction_ = index;
  }
  if (!element_refs_.empty()) {
    if (!materialize_element_refs(computation, names, pending, index)) return false;
    built = &computation.instructions.back();
    current_instruction_ = index;
  }
  Instruction& instruction = *built;
  CalledRefs refs;
  while (accept(TokenKind::kComma)) {
    if (!parse_attribute(instruction, refs)) return false;
  }
  if (!has_shape) {
    std::string problem = infer_result_shape(computation, instruction);
    if (!problem.empty()) return fail(instruction.opcode_loc, problem);
  }
  if (!instruction.backend_config.empty()) {
    std::string problem = apply_backend_config(instruction);
    if (!problem.empty()) warn(backend_config_loc_, problem);
  }
  if (!record_calls(instruction, refs, static_cast<int>(module_.computations.size()), index)) return false;

  if (!names.emplace(name, index).second) {
    return fail(instruction.loc, fmt::format("duplicate instruction name %{}", name));
  }
  if (instruction.is_root) {
    if (computation.root >= 0) {
      return fail(instruction.loc, fmt::format("second ROOT in computation %{} (the first is %{})", computation.name,
                                               computation.instructions[static_cast<size_t>(computation.root)].name));
    }
    computation.root = index;
  }
  return true;
}

bool Parser::parse_opcode_token(Instruction& instruction) {
  if (!is(TokenKind::kIdent)) return fail_expected("an opcode");
  std::string_view text = cur_.text;
  instruction.opcode_loc = cur_.loc;
  if (auto op = parse_opcode(text)) {
    instruction.opcode = *op;
    advance();
    return true;
  }
  // Sugared async forms: all-gather-start, custom-call-done, ...
  struct Suffix {
    std::string_view text;
    Opcode opcode;
  };
  static constexpr Suffix kSuffixes[] = {
      {"-start", Opcode::kAsyncStart}, {"-update", Opcode::kAsyncUpdate}, {"-done", Opcode::kAsyncDone}};
  for (const Suffix& s : kSuffixes) {
    if (text.size() <= s.text.size() || text.substr(text.size() - s.text.size()) != s.text) continue;
    auto wrapped = parse_opcode(text.substr(0, text.size() - s.text.size()));
    if (wrapped && !is_async(*wrapped) && *wrapped != Opcode::kParameter && *wrapped != Opcode::kConstant) {
      instruction.opcode = s.opcode;
      instruction.async_wrapped = *wrapped;
      advance();
      return true;
    }
  }
  return fail_here(fmt::format("unknown opcode '{}'", text.substr(0, 60)));
}

bool Parser::parse_operands(Instruction& instruction, int index,
                            const std::unordered_map<std::string_view, int>& names,
                            std::vector<PendingOperand>& pending) {
  if (!accept(TokenKind::kLparen)) {
    return fail_expected(fmt::format("'(' after the opcode {}", opcode_name(instruction.opcode)));
  }
  if (instruction.opcode == Opcode::kParameter) {
    SourceLoc loc = cur_.loc;
    if (!parse_int(instruction.parameter_number)) return false;
    if (instruction.parameter_number < 0) return fail(loc, "parameter number must not be negative");
    return expect(TokenKind::kRparen, "')' after the parameter number");
  }
  if (instruction.opcode == Opcode::kConstant) return parse_literal(instruction);
  if (accept(TokenKind::kRparen)) return true;
  for (;;) {
    // Optional shape prefix: `f32[4]{0} %x` or `(f32[2], s32[]) %t`.
    bool has_shape = is(TokenKind::kLparen);
    if (!has_shape && is(TokenKind::kIdent) && parse_primitive_type(cur_.text)) {
      has_shape = peek_next().kind == TokenKind::kLbracket;
    }
    if (has_shape && !parse_shape(operand_shape_, 0)) return false;
    if (!is(TokenKind::kName) && !is(TokenKind::kIdent)) return fail_expected("an operand name");
    if (is(TokenKind::kIdent) && peek_next().kind == TokenKind::kLparen) {
      if (!parse_nested_operand(instruction, has_shape, names, pending)) return false;
      if (accept(TokenKind::kComma)) continue;
      return expect(TokenKind::kRparen, "',' or ')' after the operand");
    }
    auto it = names.find(cur_.text);
    if (it != names.end()) {
      instruction.operands.push_back(it->second);
    } else if (cur_.text.find('#') != std::string_view::npos) {
      // `%t#2`: element 2 of tuple %t (resolved once the operands are read).
      element_refs_.push_back({instruction.operands.size(), cur_.text, cur_.loc});
      instruction.operands.push_back(-1);
    } else {
      pending.push_back({index, instruction.operands.size(), cur_.text, cur_.loc});
      instruction.operands.push_back(-1);
    }
    advance();
    if (accept(TokenKind::kComma)) continue;
    return expect(TokenKind::kRparen, "',' or ')' after the operand");
  }
}

bool Parser::finish_computation(Computation& computation, const std::unordered_map<std::string_view, int>& names,
                                const std::vector<PendingOperand>& pending) {
  for (const PendingOperand& p : pending) {
    if (names.count(p.name)) {
      fail(p.loc, fmt::format("operand %{} is used before it is defined", p.name));
    } else {
      fail(p.loc, fmt::format("undefined operand %{}", p.name));
    }
    if (errors_.size() >= 20) break;
  }
  if (!pending.empty()) return false;
  for (const PendingOperand& p : pending_controls_) {
    auto it = names.find(p.name);
    if (it == names.end()) {
      fail(p.loc, fmt::format("control-predecessors names undefined instruction %{}", p.name));
      continue;
    }
    computation.instructions[static_cast<size_t>(p.instruction)].control_predecessors.push_back(it->second);
  }
  if (!errors_.empty()) return false;
  if (computation.instructions.empty()) {
    return fail(computation.loc, fmt::format("computation %{} has no instructions", computation.name));
  }
  if (computation.root < 0) {
    computation.root = static_cast<int>(computation.instructions.size()) - 1;
    computation.instructions.back().is_root = true;
  }

  // parameters[N] = index of parameter(N); numbers must be 0..count-1, once each.
  size_t count = 0;
  for (const Instruction& inst : computation.instructions) count += inst.opcode == Opcode::kParameter;
  computation.parameters.assign(count, -1);
  for (size_t i = 0; i < computation.instructions.size(); ++i) {
    const Instruction& inst = computation.instructions[i];
    if (inst.opcode != Opcode::kParameter) continue;
    auto number = static_cast<uint64_t>(inst.parameter_number);
    if (number >= count) {
      return fail(inst.opcode_loc, fmt::format("parameter number {} is out of range: computation %{} has {} "
                                               "parameter(s)",
                                               inst.parameter_number, computation.name, count));
    }
    int& slot = computation.parameters[number];
    if (slot >= 0) {
      return fail(inst.opcode_loc, fmt::format("parameter number {} is used twice (also by %{})", number,
                                               computation.instructions[static_cast<size_t>(slot)].name));
    }
    slot = static_cast<int>(i);
  }
  return true;
}

bool Parser::record_calls(Instruction& instruction, CalledRefs& refs, int computation, int instruction_index) {
  // Order: condition, body (while); true, false, branches (conditional);
  // select, scatter (select-and-scatter); then to_apply and calls /
  // called_computations. The printer writes them back
  // in an order that reads back to the same list.
  std::vector<CalledRefs::Ref>* groups[] = {&refs.condition,    &refs.body,     &refs.true_branch,
                                             &refs.false_branch, &refs.branches, &refs.select,
                                             &refs.scatter,      &refs.to_apply, &refs.calls};
  for (auto* group : groups) {
    for (CalledRefs::Ref& ref : *group) {
      PendingCall call;
      call.computation = computation;
      call.instruction = instruction_index;
      call.slot = instruction.called.size();
      call.name = std::move(ref.name);
      call.loc = ref.loc;
      pending_calls_.push_back(std::move(call));
      instruction.called.push_back(-1);
    }
  }
  return true;
}

bool Parser::resolve_calls() {
  for (const PendingCall& call : pending_calls_) {
    auto it = computation_names_.find(call.name);
    if (it == computation_names_.end()) {
      fail(call.loc, fmt::format("undefined computation %{}", call.name));
      if (errors_.size() >= 20) break;
      continue;
    }
    Computation& computation = module_.computations[static_cast<size_t>(call.computation)];
    computation.instructions[static_cast<size_t>(call.instruction)].called[call.slot] = it->second;
  }
  return errors_.empty();
}

bool Parser::check_call_cycles() {
  // Iterative DFS over the call graph; a back edge is a recursive call, which
  // no backend could run.
  size_t n = module_.computations.size();
  std::vector<int> state(n, 0);  // 0 new, 1 on stack, 2 done
  struct Frame {
    int computation;
    size_t instruction;
    size_t slot;
  };
  for (size_t start = 0; start < n; ++start) {
    if (state[start]) continue;
    std::vector<Frame> stack{{static_cast<int>(start), 0, 0}};
    state[start] = 1;
    while (!stack.empty()) {
      Frame& f = stack.back();
      const Computation& c = module_.computations[static_cast<size_t>(f.computation)];
      if (f.instruction >= c.instructions.size()) {
        state[static_cast<size_t>(f.computation)] = 2;
        stack.pop_back();
        continue;
      }
      const Instruction& inst = c.instructions[f.instruction];
      if (f.slot >= inst.called.size()) {
        ++f.instruction;
        f.slot = 0;
        continue;
      }
      int callee = inst.called[f.slot++];
      if (state[static_cast<size_t>(callee)] == 1) {
        return fail(inst.loc, fmt::format("%{} calls computation %{}, which is already on the call chain "
                                          "(recursive calls are not allowed)",
                                          inst.name, module_.computations[static_cast<size_t>(callee)].name));
      }
      if (state[static_cast<size_t>(callee)] == 0) {
        state[static_cast<size_t>(callee)] = 1;
        stack.push_back({callee, 0, 0});
      }
    }
  }
  return true;
}

}  // namespace parser_internal

Result<Module> parse_program(std::string_view text, std::string_view file_name) {
  parser_internal::Parser parser(text, file_name);
  return parser.run();
}

Result<Module> parse_program_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return invalid_input(fmt::format("{}: error: is a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalid_input(fmt::format("{}: error: cannot open file", path));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return invalid_input(fmt::format("{}: error: cannot read file", path));
  return parse_program(buffer.str(), path);
}

}  // namespace sl::hlo
