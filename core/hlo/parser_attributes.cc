// HLO text parser: the attribute grammar (`, name=value` after the operands).
// Typed attributes fill Instruction fields (the op-specific ones are in
// parser_attributes_ops.cc); any other attribute is kept verbatim in
// Instruction::attributes, with a warning unless XLA is known to print it
// for reasons that do not change what the program computes.

#include <fmt/format.h>

#include <array>

#include "core/hlo/parser_impl.h"

namespace sl::hlo::parser_internal {
namespace {

// XLA attributes that do not change what the program computes or where it
// runs here: kept verbatim in Instruction::attributes without a warning.
constexpr std::array<std::string_view, 36> kKeptQuietly = {
    "sharding",           "origin",
    "statistics",         "output_to_operand_aliasing",
    "api_version",        "operand_layout_constraints",
    "custom_call_schedule", "schedule",
    "scheduling_name",    "custom_call_has_side_effect",
    "async_group_id",     "constrain_layout",
    "result_accuracy",    "operand_precision",
    "algorithm_config",   "parameter_replication",
    "is_host_transfer",   "padding_type",
    "cross_program_prefetch_index", "infeed_config",
    "outfeed_config",     "outfeed_shape",
    "is_composite",       "inferred_dimension",
    "domain",             "epsilon",
    "feature_index",      "fft_type",
    "fft_length",         "lower",
    "left_side",          "unit_diagonal",
    "transpose_a",        "literal",
    "conv_kind",          "mode",
};

std::optional<ComparisonDirection> parse_direction(std::string_view text) {
  if (text == "EQ") return ComparisonDirection::kEq;
  if (text == "NE") return ComparisonDirection::kNe;
  if (text == "LT") return ComparisonDirection::kLt;
  if (text == "LE") return ComparisonDirection::kLe;
  if (text == "GT") return ComparisonDirection::kGt;
  if (text == "GE") return ComparisonDirection::kGe;
  return std::nullopt;
}

}  // namespace

bool Parser::parse_attribute(Instruction& inst, CalledRefs& refs) {
  if (!is(TokenKind::kIdent)) return fail_expected("an attribute name");
  std::string_view name = cur_.text;
  SourceLoc loc = cur_.loc;
  advance();
  if (!accept(TokenKind::kEquals)) return fail_expected(fmt::format("'=' after attribute {}", name));

  // Most frequent first: nearly every instruction of a dump has metadata.
  if (name == "metadata") return parse_metadata(inst);
  if (name == "dimensions") return parse_int_list(inst.dimensions);
  if (name == "slice") return parse_slice(inst.slice);
  if (name == "dynamic_slice_sizes") return parse_int_list(inst.dynamic_slice_sizes);
  if (name == "iota_dimension") return parse_int(inst.iota_dimension);
  if (name == "index") return parse_int(inst.tuple_index);
  if (name == "lhs_contracting_dims") return parse_int_list(inst.dot.lhs_contracting);
  if (name == "rhs_contracting_dims") return parse_int_list(inst.dot.rhs_contracting);
  if (name == "lhs_batch_dims") return parse_int_list(inst.dot.lhs_batch);
  if (name == "rhs_batch_dims") return parse_int_list(inst.dot.rhs_batch);
  if (name == "direction") {
    auto direction = is(TokenKind::kIdent) ? parse_direction(cur_.text) : std::nullopt;
    if (!direction) return fail_expected("a comparison direction (EQ, NE, LT, LE, GT, GE)");
    inst.comparison_direction = direction;
    advance();
    return true;
  }
  if (name == "type") {
    if (!is(TokenKind::kIdent)) return fail_expected("a comparison type");
    inst.comparison_type = std::string(cur_.text);
    advance();
    return true;
  }
  if (name == "channel_id") {
    int64_t id = 0;
    if (!parse_int(id)) return false;
    inst.channel_id = id;
    return true;
  }
  if (name == "use_global_device_ids") {
    bool value = false;
    if (!parse_bool(value)) return false;
    inst.use_global_device_ids = value;
    return true;
  }
  if (name == "replica_groups") {
    ReplicaGroups groups;
    if (!parse_replica_groups(groups)) return false;
    inst.replica_groups = std::move(groups);
    return true;
  }
  if (name == "source_target_pairs") return parse_pairs(inst.source_target_pairs);
  if (name == "to_apply") return parse_computation_ref(refs.to_apply, false);
  if (name == "calls" || name == "called_computations") return parse_computation_ref(refs.calls, true);
  if (name == "condition") return parse_computation_ref(refs.condition, false);
  if (name == "body") return parse_computation_ref(refs.body, false);
  if (name == "true_computation") return parse_computation_ref(refs.true_branch, false);
  if (name == "false_computation") return parse_computation_ref(refs.false_branch, false);
  if (name == "branch_computations") return parse_computation_ref(refs.branches, true);
  if (name == "select") return parse_computation_ref(refs.select, false);
  if (name == "scatter") return parse_computation_ref(refs.scatter, false);
  if (name == "kind") {
    if (!is(TokenKind::kIdent)) return fail_expected("a fusion kind such as kLoop");
    inst.fusion_kind = std::string(cur_.text);
    advance();
    return true;
  }
  if (name == "custom_call_target") {
    if (!is(TokenKind::kString)) return fail_expected("a quoted custom_call_target");
    inst.custom_call_target = cur_.value;
    advance();
    return true;
  }
  if (name == "backend_config") return parse_backend_config(inst);
  if (name == "frontend_attributes") return parse_frontend_attributes(inst);
  if (name == "control-predecessors") return parse_control_predecessors();
  if (name == "async_execution_thread") {
    if (!is(TokenKind::kString)) return fail_expected("a quoted async_execution_thread");
    inst.async_execution_thread = cur_.value;
    advance();
    return true;
  }
  bool handled = false;
  if (!parse_op_attribute(inst, name, handled)) return false;
  if (handled) return true;

  bool quiet = false;
  for (std::string_view known : kKeptQuietly) quiet = quiet || name == known;
  if (!quiet) warn_unknown_attribute(loc, name);
  return keep_attribute(inst, name);
}

bool Parser::keep_attribute(Instruction& inst, std::string_view name) {
  size_t begin = cur_.begin;
  if (!skip_value()) return false;
  inst.attributes.insert_or_assign(std::string(name), std::string(text_.substr(begin, prev_.end - begin)));
  return true;
}

bool Parser::parse_control_predecessors() {
  if (!expect(TokenKind::kLbrace, "'{' to open control-predecessors")) return false;
  if (accept(TokenKind::kRbrace)) return true;
  for (;;) {
    if (!is(TokenKind::kName) && !is(TokenKind::kIdent)) return fail_expected("an instruction name");
    pending_controls_.push_back({current_instruction_, 0, cur_.text, cur_.loc});
    advance();
    if (accept(TokenKind::kComma)) continue;
    return expect(TokenKind::kRbrace, "',' or '}' in control-predecessors");
  }
}

bool Parser::parse_computation_ref(std::vector<CalledRefs::Ref>& out, bool allow_list) {
  auto one = [&]() {
    if (!is(TokenKind::kName) && !is(TokenKind::kIdent)) return fail_expected("a computation name");
    out.push_back({std::string(cur_.text), cur_.loc});
    advance();
    return true;
  };
  if (!allow_list || !is(TokenKind::kLbrace)) return one();
  advance();
  if (accept(TokenKind::kRbrace)) return true;
  for (;;) {
    if (!one()) return false;
    if (accept(TokenKind::kComma)) continue;
    return expect(TokenKind::kRbrace, "',' or '}' in the computation list");
  }
}

bool Parser::parse_backend_config(Instruction& inst) {
  backend_config_loc_ = cur_.loc;
  if (is(TokenKind::kString)) {
    inst.backend_config = cur_.value;
    advance();
    return true;
  }
  if (!is(TokenKind::kLbrace)) return fail_expected("'{' or a quoted string for backend_config");
  size_t begin = cur_.begin;
  if (!skip_balanced()) return false;
  inst.backend_config = std::string(text_.substr(begin, prev_.end - begin));
  return true;
}

bool Parser::parse_frontend_attributes(Instruction& inst) {
  if (!expect(TokenKind::kLbrace, "'{' to open frontend_attributes")) return false;
  if (accept(TokenKind::kRbrace)) return true;
  for (;;) {
    std::string key;
    bool continue_after_value = false;  // the value was read past already
    if (is(TokenKind::kIdent)) {
      key = std::string(cur_.text);
    } else if (is(TokenKind::kString)) {
      key = cur_.value;
    } else {
      return fail_expected("a frontend attribute name");
    }
    advance();
    if (!expect(TokenKind::kEquals, "'=' after the frontend attribute name")) return false;
    if (is(TokenKind::kString)) {
      inst.frontend_attributes[key] = cur_.value;
    } else if (is(TokenKind::kLbrace)) {
      // composite.attributes={n = 1 : i32, ...}: a dictionary, kept as written.
      size_t begin = cur_.begin;
      if (!skip_balanced()) return false;
      inst.frontend_attributes[key] = std::string(text_.substr(begin, prev_.end - begin));
      continue_after_value = true;
    } else if (is(TokenKind::kIdent) || is(TokenKind::kInt)) {
      inst.frontend_attributes[key] = std::string(cur_.text);
    } else {
      return fail_expected("a quoted frontend attribute value");
    }
    if (!continue_after_value) advance();
    if (accept(TokenKind::kComma)) continue;
    return expect(TokenKind::kRbrace, "',' or '}' in frontend_attributes");
  }
}

}  // namespace sl::hlo::parser_internal
