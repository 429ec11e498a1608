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
  std::vector<Ref> to_apply, calls, condition, body, branches, true_branch, false_branch, select, scatter;
};

// Reads backend_config JSON text into the typed fields of `instruction`
// (operation_queue_id, known_trip_count, wait_on_operation_queues, GEMM dot
// dimensions and gemm_config). Never throws;
// returns a message when the text holds JSON the tool reads but cannot use.
std::string apply_backend_config(Instruction& instruction);

// The mesh form of replica groups, as read: mesh axes, an optional explicit
// device order, and the (sub-)axes that form each group.
struct MeshGroups {
  struct AxisRef {
    size_t axis = 0;
    int64_t pre_size = 1;  // sub-axis a:(pre)size; size 0 = the whole axis
    int64_t size = 0;
    SourceLoc loc;
  };
  std::vector<std::string> axis_names;
  std::vector<int64_t> axis_sizes;
  std::vector<int64_t> device_ids;  // empty = iota
  std::vector<AxisRef> refs;
};

// Expands a mesh form into groups; empty string or a message (and `where`
// set to the axis reference at fault, when one is).
std::string expand_mesh_groups(const MeshGroups& mesh, std::vector<std::vector<int64_t>>& groups,
                               SourceLoc& where);

// Source text kept for printing back on one line: comments and line breaks
// become single spaces (so a `//` comment cannot swallow what follows).
std::string one_line(std::string_view text);

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
  bool parse_header_attribute(std::string_view name);
  bool parse_computation();
  bool parse_signature(Computation& computation);
  size_t estimate_instructions(size_t body_begin, int body_line);
  bool parse_instruction(Computation& computation, std::unordered_map<std::string_view, int>& names,
                         std::vector<PendingOperand>& pending);
  bool parse_opcode_token(Instruction& instruction);
  // `%t#N` operands of the instruction at `index` become get-tuple-elements
  // before it; `index` is updated (parser_short_forms.cc).
  bool materialize_element_refs(Computation& computation, std::unordered_map<std::string_view, int>& names,
                                std::vector<PendingOperand>& pending, int& index);
  // The instruction `name` stands for, creating the get-tuple-elements a
  // `t#N#M` name needs; -1 after an error.
  int resolve_element(Computation& computation, std::unordered_map<std::string_view, int>& names,
                      std::string_view name, SourceLoc loc);
  // For instructions written without a result shape (parser_short_forms.cc):
  // empty, or why XLA's parser would refuse to infer it too.
  std::string infer_result_shape(const Computation& computation, Instruction& instruction);
  bool parse_operands(Instruction& instruction, int index, const std::unordered_map<std::string_view, int>& names,
                      std::vector<PendingOperand>& pending);
  // Nested instructions (parser_nested.cc): an operand written as a whole
  // instruction is read into nested_ and stands as nested_operand(slot)
  // until materialize_nested places it before its user.
  static constexpr int kNestedIndex = -1;  // PendingOperand::instruction of a nested one
  static int nested_operand(size_t slot) { return -2 - static_cast<int>(slot); }
  static bool is_nested_operand(int operand) { return operand <= -2; }
  static size_t nested_slot(int operand) { return static_cast<size_t>(-2 - operand); }
  bool parse_nested_operand(Instruction& user, bool has_shape, const std::unordered_map<std::string_view, int>& names,
                            std::vector<PendingOperand>& pending);
  void materialize_nested(Computation& computation, std::vector<PendingOperand>& pending, int& index);
  bool finish_computation(Computation& computation, const std::unordered_map<std::string_view, int>& names,
                          const std::vector<PendingOperand>& pending);
  bool record_calls(Instruction& instruction, CalledRefs& refs, int computation, int instruction_index);
  bool resolve_calls();
  bool check_call_cycles();

  // --- values (parser_values.cc) ---
  bool parse_shape(Shape& shape, int depth, bool before_body = false);
  bool parse_array_shape(Shape& shape, bool before_body);
  bool read_layout(bool before_body, Shape& shape);  // keeps minor_to_major
  bool parse_int(int64_t& value);
  bool parse_bool(bool& value);
  bool parse_int_list(std::vector<int64_t>& values);          // {1,2} or {}
  bool parse_int_list_list(std::vector<std::vector<int64_t>>& values);
  bool parse_bracket_int_list(std::vector<int64_t>& values);  // [1,2]
  bool parse_literal(Instruction& instruction);
  bool parse_literal_level(const Shape& shape, size_t depth, std::vector<double>& values);
  // `( {1, 2}, ({3}, 4) )`: every leaf's values in order.
  bool parse_tuple_literal(const Shape& shape, size_t depth, std::vector<double>& values);
  bool parse_literal_scalar(PrimitiveType type, std::vector<double>& values);
  bool parse_replica_groups(ReplicaGroups& groups);
  bool parse_slice(std::vector<SliceDim>& slice);
  bool parse_pairs(std::vector<std::pair<int64_t, int64_t>>& pairs);
  bool skip_balanced();                                    // one {...} [...] (...) group
  bool skip_value();                                       // an attribute value we do not read
  bool skip_one_value();                                   // one token or one bracketed group

  // --- replica groups (parser_replica_groups.cc) ---
  bool parse_mesh_groups(ReplicaGroups& groups);
  bool parse_mesh_name(std::string& name);

  // --- stack-frame tables and metadata (parser_tables.cc) ---
  bool parse_stack_frame_tables();
  bool parse_string_table(std::vector<std::string>& out);
  bool parse_table_row(std::string_view table, size_t expected_id,
                       const std::vector<std::pair<std::string_view, int64_t*>>& fields);
  bool check_stack_frame_ids();
  bool parse_metadata(Instruction& instruction);
  bool parse_metadata_fields(OpMetadata& metadata);

  // --- attributes (parser_attributes.cc) ---
  bool parse_attribute(Instruction& instruction, CalledRefs& refs);
  bool parse_computation_ref(std::vector<CalledRefs::Ref>& out, bool allow_list);
  bool parse_backend_config(Instruction& instruction);
  bool parse_frontend_attributes(Instruction& instruction);
  bool parse_control_predecessors();
  bool keep_attribute(Instruction& instruction, std::string_view name);

  // --- op-specific attributes (parser_attributes_ops.cc) ---
  // Sets `handled` when `name` is one of them for this opcode.
  bool parse_op_attribute(Instruction& instruction, std::string_view name, bool& handled);
  bool parse_dxd(std::string_view what, size_t parts, std::vector<std::vector<int64_t>>& out);
  bool parse_window(std::vector<WindowDim>& window);
  bool parse_padding(std::vector<PadDim>& padding);
  bool parse_string_or_ident(std::string& out, std::string_view what);

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
  std::vector<std::pair<std::string, size_t>> warned_attributes_;  // name -> index in warnings_
  std::vector<int64_t> warning_counts_;                        // parallel to warnings_
  SourceLoc backend_config_loc_;
  // control-predecessors of the computation being read, resolved when it ends
  // (`slot` unused); `current_instruction_` is the index being read.
  std::vector<PendingOperand> pending_controls_;
  int current_instruction_ = 0;
  // `%t#N` operands of the instruction being read (see parser_short_forms.cc).
  struct ElementRef {
    size_t slot;
    std::string_view name;  // "t#N", or "t#N#M" for a nested tuple
    SourceLoc loc;
  };
  std::vector<ElementRef> element_refs_;
  std::vector<Instruction> nested_;       // nested instructions of the instruction being read
  int nested_depth_ = 0;
  int64_t nested_count_ = 0;              // names them `<opcode>.nested.N`
  Computation* computation_ = nullptr;    // the computation being read
  std::string entry_name_;  // header entry_computation_name=, when given
  SourceLoc entry_name_loc_;
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
