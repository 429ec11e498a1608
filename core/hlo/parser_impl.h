#pragma once
// Internals of the HLO text parser (not a public header: use parser.h).
// One Parser object reads one module. Grammar functions return false after
// recording the first syntax error; name resolution errors are collected
// (several per run) once the whole module has been read.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/common/status.h"
#include "core/hlo/diagnostic.h"
#include "core/hlo/lexer.h"
#include "core/hlo/module.h"

namespace sl::hlo::parser_internal {

constexpr int kMaxNesting = 64;

// A computation reference waiting for the whole module to be read.
struct PendingCall {
  int computation = 0;
  int instruction = 0;
  size_t slot = 0;
  std::string name;
  SourceLoc loc;
};

// An operand that did not name an earlier instruction.
struct PendingOperand {
  int instruction = 0;
  size_t slot = 0;
  std::string_view name;
  SourceLoc loc;
};

// Called-computation attributes of one instruction, in any order in the text.
struct CalledRefs {
  struct Ref {
    std::string name;
    SourceLoc loc;
  };
  std::vector<Ref> to_apply, calls, condition, body, branches, true_branch, false_branch;
};

// Reads backend_config JSON text into the typed fields of `instruction`
// (operation_queue_id, known_trip_count, GEMM dot dimensions). Never throws;
// returns a message when the text holds JSON the tool reads but cannot use.
std::string apply_backend_config(Instruction& instruction);

// Expands `[G,S]<=[d0,d1,...]T(perm)` into groups; empty string or a message.
std::string expand_iota_groups(const std::vector<int64_t>& group_dims, const std::vector<int64_t>& reshape_dims,
                               const std::vector<int64_t>& perm, std::vector<std::vector<int64_t>>& groups);

class Parser {
 public:
  Parser(std::string_view text, std::string_view file_name);
  Result<Module> run();

 private:
  // --- tokens (parser.cc) ---
  const Token& cur() const { return cur_; }
  void advance();
  bool is(TokenKind kind) const { return cur_.kind == kind; }
  bool is_ident(std::string_view word) const { return cur_.kind == TokenKind::kIdent && cur_.text == word; }
  bool accept(TokenKind kind);
  bool expect(TokenKind kind, std::string_view what);
  bool fail(SourceLoc loc, std::string message);
  bool fail_here(std::string message);
  bool fail_expected(std::string_view what);
  void warn(SourceLoc loc, std::string message);
  void warn_unknown_attribute(SourceLoc loc, std::string_view name);
  // Peeks at the token after the current one without consuming anything.
  Token peek_next();

  // --- module structure (parser.cc) ---
  bool parse_header();
  bool parse_computation();
  bool parse_signature(Computation& computation);
  size_t estimate_instructions(size_t body_begin, int body_line);
  bool parse_instruction(Computation& computation, std::unordered_map<std::string_view, int>& names,
                         std::vector<PendingOperand>& pending);
  bool parse_opcode_token(Instruction& instruction);
  bool parse_operands(Instruction& instruction, int index, const std::unordered_map<std::string_view, int>& names,
                      std::vector<PendingOperand>& pending);
  bool finish_computation(Computation& computation, const std::unordered_map<std::string_view, int>& names,
                          const std::vector<PendingOperand>& pending);
  bool record_calls(Instruction& instruction, CalledRefs& refs, int computation, int instruction_index);
  bool resolve_calls();
  bool check_call_cycles();

  // --- values (parser_values.cc) ---
  bool parse_shape(Shape& shape, int depth, bool before_body = false);
  bool parse_array_shape(Shape& shape, bool before_body);
  bool skip_layout(bool before_body);
  bool parse_int(int64_t& value);
  bool parse_bool(bool& value);
  bool parse_int_list(std::vector<int64_t>& values);          // {1,2} or {}
  bool parse_int_list_list(std::vector<std::vector<int64_t>>& values);
  bool parse_bracket_int_list(std::vector<int64_t>& values);  // [1,2]
  bool parse_literal(Instruction& instruction);
  bool parse_literal_level(const Shape& shape, size_t depth, std::vector<double>& values);
  bool parse_literal_scalar(PrimitiveType type, std::vector<double>& values);
  bool parse_replica_groups(ReplicaGroups& groups);
  bool parse_slice(std::vector<SliceDim>& slice);
  bool parse_pairs(std::vector<std::pair<int64_t, int64_t>>& pairs);
  bool skip_balanced();                                    // one {...} [...] (...) group
  bool skip_value();                                       // an attribute value we do not read

  // --- attributes (parser_attributes.cc) ---
  bool parse_attribute(Instruction& instruction, CalledRefs& refs);
  bool parse_computation_ref(std::vector<CalledRefs::Ref>& out, bool allow_list);
  bool parse_backend_config(Instruction& instruction);
  bool parse_frontend_attributes(Instruction& instruction);

  Lexer lexer_;
  Token cur_;
  Token prev_;  // last consumed token
  std::string_view text_;
  Module module_;
  std::vector<Diagnostic> errors_;
  std::vector<PendingCall> pending_calls_;
  std::unordered_map<std::string, int> computation_names_;
  // Unknown attributes warn once per name (first place, then a count), so a
  // large dump cannot flood the warnings.
  std::vector<Diagnostic> warnings_;
  std::unordered_map<std::string, size_t> warned_attributes_;  // name -> index in warnings_
  std::vector<int64_t> warning_counts_;                        // parallel to warnings_
  SourceLoc backend_config_loc_;
  Shape operand_shape_;  // `f32[4]{0} %x` operand prefixes: parsed, checked, dropped
  // Offsets and line numbers of `}` at the start of a line (reserve hints).
  struct CloseLine {
    size_t offset;
    int line;
  };
  std::vector<CloseLine> close_lines_;
  size_t next_close_ = 0;
  bool closes_scanned_ = false;
};

}  // namespace sl::hlo::parser_internal
