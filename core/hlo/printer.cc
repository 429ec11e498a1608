// HLO text printer. The output parses back to an equal Module (see
// parser_roundtrip.h): every typed attribute is written, sugared async forms
// stay sugared, and called computations are written under names that read
// back into the same `called` list.

#include "core/hlo/printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/hlo/lexer.h"
#include "core/hlo/printer_impl.h"

namespace sl::hlo {
namespace {

bool is_plain_name(std::string_view s) {
  if (s.empty()) return false;
  char c0 = s[0];
  if (!((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z') || c0 == '_')) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-' || c == '$';
    if (!ok) return false;
  }
  return s.find("->") == std::string_view::npos;
}

std::string int_list(const std::vector<int64_t>& values) {
  return fmt::format("{{{}}}", fmt::join(values, ","));
}

std::string direction_name(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq: return "EQ";
    case ComparisonDirection::kNe: return "NE";
    case ComparisonDirection::kLt: return "LT";
    case ComparisonDirection::kLe: return "LE";
    case ComparisonDirection::kGt: return "GT";
    case ComparisonDirection::kGe: return "GE";
  }
  return "EQ";
}

std::string scalar_text(double v, PrimitiveType type) {
  if (type == PrimitiveType::kPred) return v != 0 ? "true" : "false";
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (!is_floating(type)) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);  // shortest text that reads back to the same double
}

void literal_level(const Instruction& inst, size_t depth, size_t& next, std::string& out) {
  const Shape& shape = inst.shape;
  if (depth == shape.dims.size()) {
    auto value = [&](PrimitiveType type) {
      out += next < inst.literal.size() ? scalar_text(inst.literal[next], type) : "0";
      ++next;
    };
    if (is_complex(shape.type)) {
      // Stored as (real, imaginary) pairs.
      const PrimitiveType part = shape.type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
      out += "(";
      value(part);
      out += ", ";
      value(part);
      out += ")";
      return;
    }
    value(shape.type);
    return;
  }
  out += "{";
  for (int64_t i = 0; i < shape.dims[depth]; ++i) {
    if (i) out += ", ";
    literal_level(inst, depth + 1, next, out);
  }
  out += "}";
}

std::string literal_text(const Instruction& inst) {
  if (!inst.literal_text.empty()) return inst.literal_text;
  if (!inst.shape.is_array()) return "0";
  if (inst.literal.empty() && inst.shape.element_count() > 0) return "{...}";
  std::string out;
  size_t next = 0;
  literal_level(inst, 0, next, out);
  return out;
}

std::string operand_name(const Computation& computation, int operand) {
  if (operand < 0 || static_cast<size_t>(operand) >= computation.instructions.size()) return "%<invalid>";
  return "%" + computation.instructions[static_cast<size_t>(operand)].name;
}

std::string computation_name(const Module& module, int index) {
  if (index < 0 || static_cast<size_t>(index) >= module.computations.size()) return "%<invalid>";
  return "%" + module.computations[static_cast<size_t>(index)].name;
}

std::string computation_list(const Module& module, const std::vector<int>& called, size_t from) {
  std::string out = "{";
  for (size_t i = from; i < called.size(); ++i) {
    if (i > from) out += ", ";
    out += computation_name(module, called[i]);
  }
  return out + "}";
}

// Writes `called` under attribute names the parser reads back in the same
// order (see Parser::record_calls).
void print_called(const Module& module, const Instruction& inst, Opcode op, std::string& out) {
  const std::vector<int>& called = inst.called;
  if (called.empty()) return;
  bool explicit_async = is_async(inst.opcode) && !inst.async_wrapped;
  if (op == Opcode::kWhile && called.size() >= 2) {
    out += ", condition=" + computation_name(module, called[0]) + ", body=" + computation_name(module, called[1]);
    if (called.size() > 2) out += ", called_computations=" + computation_list(module, called, 2);
  } else if (op == Opcode::kSelectAndScatter && called.size() == 2) {
    out += ", select=" + computation_name(module, called[0]) + ", scatter=" + computation_name(module, called[1]);
  } else if (op == Opcode::kConditional) {
    out += ", branch_computations=" + computation_list(module, called, 0);
  } else if (explicit_async || op == Opcode::kFusion) {
    out += called.size() == 1 ? ", calls=" + computation_name(module, called[0])
                              : ", calls=" + computation_list(module, called, 0);
  } else if (op == Opcode::kCustomCall || op == Opcode::kWhile) {
    out += ", called_computations=" + computation_list(module, called, 0);
  } else {
    out += ", to_apply=" + computation_name(module, called[0]);
    if (called.size() > 1) out += ", called_computations=" + computation_list(module, called, 1);
  }
}

bool prints_as_json(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return false;
  try {
    return nlohmann::json::accept(text);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::string print_instruction(const Module& module, const Computation& computation, const Instruction& inst) {
  std::string out;
  bool is_root = inst.is_root || (computation.root >= 0 &&
                                  static_cast<size_t>(computation.root) < computation.instructions.size() &&
                                  &computation.instructions[static_cast<size_t>(computation.root)] == &inst);
  if (is_root) out += "ROOT ";
  out += "%" + inst.name + " = " + to_string_with_layout(inst.shape) + " ";
  Opcode op = inst.async_wrapped.value_or(inst.opcode);
  if (inst.async_wrapped) {
    out += opcode_name(*inst.async_wrapped);
    out += inst.opcode == Opcode::kAsyncStart ? "-start" : inst.opcode == Opcode::kAsyncUpdate ? "-update" : "-done";
  } else {
    out += opcode_name(inst.opcode);
  }
  out += "(";
  if (inst.opcode == Opcode::kParameter) {
    out += std::to_string(inst.parameter_number);
  } else if (inst.opcode == Opcode::kConstant) {
    out += literal_text(inst);
  } else {
    for (size_t i = 0; i < inst.operands.size(); ++i) {
      if (i) out += ", ";
      out += operand_name(computation, inst.operands[i]);
    }
  }
  out += ")";

  bool wants_dimensions = op == Opcode::kBroadcast || op == Opcode::kTranspose || op == Opcode::kReduce ||
                          op == Opcode::kConcatenate || op == Opcode::kAllGather || op == Opcode::kReduceScatter;
  bool is_start_or_plain = inst.opcode == Opcode::kAsyncStart || !inst.async_wrapped;
  if (!inst.dimensions.empty() || (wants_dimensions && is_start_or_plain)) {
    out += ", dimensions=" + int_list(inst.dimensions);
  }
  if (!inst.slice.empty()) {
    out += ", slice={";
    for (size_t i = 0; i < inst.slice.size(); ++i) {
      const SliceDim& s = inst.slice[i];
      if (i) out += ", ";
      out += s.stride == 1 ? fmt::format("[{}:{}]", s.start, s.limit)
                           : fmt::format("[{}:{}:{}]", s.start, s.limit, s.stride);
    }
    out += "}";
  }
  if (!inst.dynamic_slice_sizes.empty()) out += ", dynamic_slice_sizes=" + int_list(inst.dynamic_slice_sizes);
  if (inst.iota_dimension >= 0) out += fmt::format(", iota_dimension={}", inst.iota_dimension);
  if (inst.tuple_index >= 0) out += fmt::format(", index={}", inst.tuple_index);
  if (inst.comparison_direction) out += ", direction=" + direction_name(*inst.comparison_direction);
  if (!inst.comparison_type.empty()) out += ", type=" + inst.comparison_type;
  if (op != Opcode::kCustomCall) {
    if (!inst.dot.lhs_batch.empty()) out += ", lhs_batch_dims=" + int_list(inst.dot.lhs_batch);
    if (!inst.dot.lhs_contracting.empty()) out += ", lhs_contracting_dims=" + int_list(inst.dot.lhs_contracting);
    if (!inst.dot.rhs_batch.empty()) out += ", rhs_batch_dims=" + int_list(inst.dot.rhs_batch);
    if (!inst.dot.rhs_contracting.empty()) out += ", rhs_contracting_dims=" + int_list(inst.dot.rhs_contracting);
  }
  if (inst.channel_id) out += fmt::format(", channel_id={}", *inst.channel_id);
  if (inst.replica_groups) {
    out += ", replica_groups=";
    if (!inst.replica_groups->mesh_text.empty()) {
      out += inst.replica_groups->mesh_text;
    } else if (!inst.replica_groups->iota_text.empty()) {
      out += inst.replica_groups->iota_text;
    } else {
      out += "{";
      for (size_t i = 0; i < inst.replica_groups->groups.size(); ++i) {
        if (i) out += ",";
        out += int_list(inst.replica_groups->groups[i]);
      }
      out += "}";
    }
  }
  if (inst.use_global_device_ids) out += fmt::format(", use_global_device_ids={}", *inst.use_global_device_ids);
  if (!inst.source_target_pairs.empty()) {
    out += ", source_target_pairs={";
    for (size_t i = 0; i < inst.source_target_pairs.size(); ++i) {
      if (i) out += ",";
      out += fmt::format("{{{},{}}}", inst.source_target_pairs[i].first, inst.source_target_pairs[i].second);
    }
    out += "}";
  }
  print_called(module, inst, op, out);
  if (!inst.fusion_kind.empty()) out += ", kind=" + inst.fusion_kind;
  if (!inst.custom_call_target.empty()) out += ", custom_call_target=\"" + escape_string(inst.custom_call_target) + "\"";
  if (!inst.backend_config.empty()) {
    out += ", backend_config=";
    out += prints_as_json(inst.backend_config) ? inst.backend_config : "\"" + escape_string(inst.backend_config) + "\"";
  }
  if (!inst.frontend_attributes.empty()) {
    out += ", frontend_attributes={";
    bool first = true;
    for (const auto& [key, value] : inst.frontend_attributes) {
      if (!first) out += ",";
      first = false;
      out += is_plain_name(key) ? key : "\"" + escape_string(key) + "\"";
      out += "=\"" + escape_string(value) + "\"";
    }
    out += "}";
  }
  printer_internal::print_extra_attributes(computation, inst, out);
  return out;
}

std::string print_module(const Module& module) {
  std::string out = "HloModule ";
  out += is_plain_name(module.name) ? module.name : "\"" + escape_string(module.name) + "\"";
  if (module.is_scheduled) out += ", is_scheduled=true";
  if (module.replica_count != 1 || module.replica_count_declared) {
    out += fmt::format(", replica_count={}", module.replica_count);
  }
  if (module.num_partitions != 1 || module.num_partitions_declared) {
    out += fmt::format(", num_partitions={}", module.num_partitions);
  }
  out += "\n";
  out += printer_internal::print_stack_frame_tables(module);
  for (size_t c = 0; c < module.computations.size(); ++c) {
    const Computation& computation = module.computations[c];
    out += "\n";
    if (static_cast<int>(c) == module.entry) out += "ENTRY ";
    out += "%" + computation.name;
    // The signature as declared (it is not derived, so a round trip keeps it).
    if (computation.declared_parameters && computation.declared_result) {
      out += " (";
      const std::vector<Shape>& params = *computation.declared_parameters;
      for (size_t i = 0; i < params.size(); ++i) {
        if (i) out += ", ";
        int index = i < computation.parameters.size() ? computation.parameters[i] : -1;
        bool named = index >= 0 && static_cast<size_t>(index) < computation.instructions.size();
        out += named ? computation.instructions[static_cast<size_t>(index)].name : fmt::format("p{}", i);
        out += ": " + to_string_with_layout(params[i]);
      }
      out += ") -> " + to_string_with_layout(*computation.declared_result);
    }
    out += " {\n";
    for (const Instruction& inst : computation.instructions) {
      out += "  " + print_instruction(module, computation, inst) + "\n";
    }
    out += "}\n";
  }
  return out;
}

}  // namespace sl::hlo
