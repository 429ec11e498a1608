// HLO printer: the op-family attributes (gather/scatter dimension numbers,
// windows, padding, convolution, sort/topk, random numbers), provenance
// (metadata, control-predecessors, async threads), the attributes kept
// verbatim, and the stack-frame tables -- each in the spelling XLA prints,
// so that print -> parse round-trips.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/hlo/lexer.h"
#include "core/hlo/printer_impl.h"

namespace sl::hlo::printer_internal {
namespace {

std::string int_list(const std::vector<int64_t>& values) { return fmt::format("{{{}}}", fmt::join(values, ",")); }

void list_attr(std::string& out, std::string_view name, const std::vector<int64_t>& values, bool always) {
  if (always || !values.empty()) out += fmt::format(", {}={}", name, int_list(values));
}

// `size=3x3`-style: one number per window dimension, joined by 'x'.
template <typename Field>
std::string dxd(const std::vector<WindowDim>& window, Field field) {
  std::string out;
  for (size_t i = 0; i < window.size(); ++i) {
    if (i) out += "x";
    out += fmt::format("{}", field(window[i]));
  }
  return out;
}

std::string window_text(const std::vector<WindowDim>& w) {
  auto any = [&](auto pred) {
    for (const WindowDim& d : w) {
      if (pred(d)) return true;
    }
    return false;
  };
  std::string out = "size=" + dxd(w, [](const WindowDim& d) { return d.size; });
  if (any([](const WindowDim& d) { return d.stride != 1; })) {
    out += " stride=" + dxd(w, [](const WindowDim& d) { return d.stride; });
  }
  if (any([](const WindowDim& d) { return d.padding_low != 0 || d.padding_high != 0; })) {
    out += " pad=";
    for (size_t i = 0; i < w.size(); ++i) out += fmt::format("{}{}_{}", i ? "x" : "", w[i].padding_low, w[i].padding_high);
  }
  if (any([](const WindowDim& d) { return d.base_dilation != 1; })) {
    out += " lhs_dilate=" + dxd(w, [](const WindowDim& d) { return d.base_dilation; });
  }
  if (any([](const WindowDim& d) { return d.window_dilation != 1; })) {
    out += " rhs_dilate=" + dxd(w, [](const WindowDim& d) { return d.window_dilation; });
  }
  if (any([](const WindowDim& d) { return d.window_reversal; })) {
    out += " rhs_reversal=" + dxd(w, [](const WindowDim& d) { return d.window_reversal ? 1 : 0; });
  }
  return out;
}

void print_metadata(const OpMetadata& m, std::string& out) {
  std::string fields;
  auto add = [&](std::string piece) {
    if (!fields.empty()) fields += " ";
    fields += piece;
  };
  if (!m.op_type.empty()) add(fmt::format("op_type=\"{}\"", escape_string(m.op_type)));
  if (!m.op_name.empty()) add(fmt::format("op_name=\"{}\"", escape_string(m.op_name)));
  if (!m.source_file.empty()) add(fmt::format("source_file=\"{}\"", escape_string(m.source_file)));
  if (!m.deduplicated_name.empty()) {
    add(fmt::format("deduplicated_name=\"{}\"", escape_string(m.deduplicated_name)));
  }
  if (m.source_line != 0) add(fmt::format("source_line={}", m.source_line));
  if (m.stack_frame_id != 0) add(fmt::format("stack_frame_id={}", m.stack_frame_id));
  if (!fields.empty()) out += ", metadata={" + fields + "}";
}

}  // namespace

void print_extra_attributes(const Computation& computation, const Instruction& inst, std::string& out) {
  const Opcode op = inst.async_wrapped.value_or(inst.opcode);
  if (op == Opcode::kGather) {
    const GatherDims& g = inst.gather;
    list_attr(out, "offset_dims", g.offset_dims, true);
    list_attr(out, "collapsed_slice_dims", g.collapsed_slice_dims, true);
    list_attr(out, "start_index_map", g.start_index_map, true);
    list_attr(out, "operand_batching_dims", g.operand_batching_dims, false);
    list_attr(out, "start_indices_batching_dims", g.start_indices_batching_dims, false);
    out += fmt::format(", index_vector_dim={}", g.index_vector_dim);
    list_attr(out, "slice_sizes", g.slice_sizes, true);
    if (g.indices_are_sorted) out += ", indices_are_sorted=true";
  }
  if (op == Opcode::kScatter) {
    const ScatterDims& s = inst.scatter;
    list_attr(out, "update_window_dims", s.update_window_dims, true);
    list_attr(out, "inserted_window_dims", s.inserted_window_dims, true);
    list_attr(out, "scatter_dims_to_operand_dims", s.scatter_dims_to_operand_dims, true);
    list_attr(out, "input_batching_dims", s.input_batching_dims, false);
    list_attr(out, "scatter_indices_batching_dims", s.scatter_indices_batching_dims, false);
    out += fmt::format(", index_vector_dim={}", s.index_vector_dim);
    if (s.indices_are_sorted) out += ", indices_are_sorted=true";
    if (s.unique_indices) out += ", unique_indices=true";
  }
  if (!inst.window.empty()) out += ", window={" + window_text(inst.window) + "}";
  if (!inst.padding.empty()) {
    out += ", padding=";
    for (size_t i = 0; i < inst.padding.size(); ++i) {
      const PadDim& p = inst.padding[i];
      out += fmt::format("{}{}_{}", i ? "x" : "", p.low, p.high);
      if (p.interior != 0) out += fmt::format("_{}", p.interior);
    }
  }
  if (!inst.dim_labels.empty()) out += ", dim_labels=" + inst.dim_labels;
  if (inst.feature_group_count != 1) out += fmt::format(", feature_group_count={}", inst.feature_group_count);
  if (inst.batch_group_count != 1) out += fmt::format(", batch_group_count={}", inst.batch_group_count);
  if (inst.is_stable) out += fmt::format(", is_stable={}", *inst.is_stable);
  if (inst.k) out += fmt::format(", k={}", *inst.k);
  if (inst.largest) out += fmt::format(", largest={}", *inst.largest);
  if (!inst.rng_algorithm.empty()) out += ", algorithm=" + inst.rng_algorithm;
  if (!inst.rng_distribution.empty()) out += ", distribution=" + inst.rng_distribution;
  if (inst.exponent_bits) out += fmt::format(", exponent_bits={}", *inst.exponent_bits);
  if (inst.mantissa_bits) out += fmt::format(", mantissa_bits={}", *inst.mantissa_bits);
  if (!inst.async_execution_thread.empty()) {
    out += ", async_execution_thread=\"" + escape_string(inst.async_execution_thread) + "\"";
  }
  if (!inst.control_predecessors.empty()) {
    out += ", control-predecessors={";
    for (size_t i = 0; i < inst.control_predecessors.size(); ++i) {
      const int p = inst.control_predecessors[i];
      const bool valid = p >= 0 && static_cast<size_t>(p) < computation.instructions.size();
      out += fmt::format("{}%{}", i ? ", " : "", valid ? computation.instructions[static_cast<size_t>(p)].name
                                                       : std::string("<invalid>"));
    }
    out += "}";
  }
  for (const auto& [name, value] : inst.attributes) out += ", " + name + "=" + value;
  print_metadata(inst.metadata, out);
}

std::string print_stack_frame_tables(const Module& module) {
  const StackFrameTables& t = module.stack_frames;
  if (t.file_names.empty() && t.function_names.empty() && t.locations.empty() && t.frames.empty()) return {};
  std::string out = "\nFileNames\n";
  for (size_t i = 0; i < t.file_names.size(); ++i) out += fmt::format("{} \"{}\"\n", i + 1, escape_string(t.file_names[i]));
  out += "\nFunctionNames\n";
  for (size_t i = 0; i < t.function_names.size(); ++i) {
    out += fmt::format("{} \"{}\"\n", i + 1, escape_string(t.function_names[i]));
  }
  out += "\nFileLocations\n";
  for (size_t i = 0; i < t.locations.size(); ++i) {
    const StackFrameTables::Location& l = t.locations[i];
    out += fmt::format("{} {{file_name_id={} function_name_id={} line={} end_line={} column={} end_column={}}}\n", i + 1,
                       l.file_id, l.function_id, l.line, l.end_line, l.column, l.end_column);
  }
  out += "\nStackFrames\n";
  for (size_t i = 0; i < t.frames.size(); ++i) {
    // XLA writes the parent id plus one (1 = no parent).
    out += fmt::format("{} {{file_location_id={} parent_frame_id={}}}\n", i + 1, t.frames[i].location_id,
                       t.frames[i].parent_frame_id + 1);
  }
  return out;
}

}  // namespace sl::hlo::printer_internal
