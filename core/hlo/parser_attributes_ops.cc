// HLO text parser: attributes that belong to one opcode family (gather and
// scatter dimension numbers, windows, padding, convolution labels, sort,
// topk, random numbers, reduce-precision). Names that mean something else on
// another opcode (slice_sizes on collective-permute) are left to the caller.

#include <fmt/format.h>

#include <charconv>

#include "core/hlo/parser_impl.h"

namespace sl::hlo::parser_internal {
namespace {

// Splits "1_2x3_4" (or "3x3") into numbers: outer on 'x', inner on '_'.
// Returns false on anything that is not a signed integer.
bool split_numbers(std::string_view text, std::vector<std::vector<int64_t>>& out) {
  out.clear();
  size_t pos = 0;
  for (;;) {
    size_t x = text.find('x', pos);
    std::string_view part = text.substr(pos, x == std::string_view::npos ? std::string_view::npos : x - pos);
    std::vector<int64_t>& numbers = out.emplace_back();
    size_t p = 0;
    for (;;) {
      size_t u = part.find('_', p);
      std::string_view n = part.substr(p, u == std::string_view::npos ? std::string_view::npos : u - p);
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
      if (n.empty() || ec != std::errc() || ptr != n.data() + n.size()) return false;
      numbers.push_back(v);
      if (u == std::string_view::npos) break;
      p = u + 1;
    }
    if (x == std::string_view::npos) return true;
    pos = x + 1;
  }
}

}  // namespace

bool Parser::parse_dxd(std::string_view what, size_t parts, std::vector<std::vector<int64_t>>& out) {
  // One token: `3`, `3x3`, `0_1x2_2`, `-1_0` (the lexer keeps digits glued
  // to letters and '_' as one word).
  if (!is(TokenKind::kInt) && !is(TokenKind::kIdent)) return fail_expected(fmt::format("{} such as 2x2", what));
  if (!split_numbers(cur_.text, out)) return fail_here(fmt::format("{} '{}' is not numbers joined by 'x'", what,
                                                                   cur_.text.substr(0, 40)));
  for (const std::vector<int64_t>& n : out) {
    if (parts == 1 ? n.size() != 1 : (n.size() < 2 || n.size() > parts)) {
      return fail_here(fmt::format("{} '{}' needs {} number(s) per dimension", what, cur_.text.substr(0, 40),
                                   parts == 1 ? "1" : parts == 2 ? "2" : "2 or 3"));
    }
  }
  advance();
  return true;
}

bool Parser::parse_window(std::vector<WindowDim>& window) {
  SourceLoc loc = cur_.loc;
  if (!expect(TokenKind::kLbrace, "'{' to open the window")) return false;
  std::vector<std::vector<int64_t>> size, stride, pad, lhs, rhs, reversal;
  while (!accept(TokenKind::kRbrace)) {
    if (!is(TokenKind::kIdent)) return fail_expected("a window field (size, stride, pad, lhs_dilate, ...)");
    std::string_view field = cur_.text;
    advance();
    if (!expect(TokenKind::kEquals, "'=' after the window field")) return false;
    bool ok = field == "size"           ? parse_dxd("window size", 1, size)
              : field == "stride"       ? parse_dxd("window stride", 1, stride)
              : field == "pad"          ? parse_dxd("window pad", 2, pad)
              : field == "lhs_dilate"   ? parse_dxd("lhs_dilate", 1, lhs)
              : field == "rhs_dilate"   ? parse_dxd("rhs_dilate", 1, rhs)
              : field == "rhs_reversal" ? parse_dxd("rhs_reversal", 1, reversal)
                                        : fail(prev_.loc, fmt::format("unknown window field '{}'", field));
    if (!ok) return false;
  }
  window.assign(size.size(), WindowDim{});
  for (auto* other : {&stride, &pad, &lhs, &rhs, &reversal}) {
    if (!other->empty() && other->size() != size.size()) {
      return fail(loc, fmt::format("window fields give {} and {} dimensions", size.size(), other->size()));
    }
  }
  for (size_t i = 0; i < size.size(); ++i) {
    WindowDim& d = window[i];
    d.size = size[i][0];
    if (!stride.empty()) d.stride = stride[i][0];
    if (!pad.empty()) d.padding_low = pad[i][0], d.padding_high = pad[i][1];
    if (!lhs.empty()) d.base_dilation = lhs[i][0];
    if (!rhs.empty()) d.window_dilation = rhs[i][0];
    if (!reversal.empty()) d.window_reversal = reversal[i][0] == 1;
  }
  return true;
}

bool Parser::parse_padding(std::vector<PadDim>& padding) {
  std::vector<std::vector<int64_t>> dims;
  if (!parse_dxd("padding", 3, dims)) return false;
  padding.clear();
  for (const std::vector<int64_t>& d : dims) padding.push_back({d[0], d[1], d.size() == 3 ? d[2] : 0});
  return true;
}

bool Parser::parse_string_or_ident(std::string& out, std::string_view what) {
  if (is(TokenKind::kString)) {
    out = cur_.value;
  } else if (is(TokenKind::kIdent)) {
    out = std::string(cur_.text);
  } else {
    return fail_expected(what);
  }
  advance();
  return true;
}

bool Parser::parse_op_attribute(Instruction& inst, std::string_view name, bool& handled) {
  handled = true;
  const Opcode op = inst.async_wrapped.value_or(inst.opcode);
  const bool gather = op == Opcode::kGather;
  const bool scatter = op == Opcode::kScatter;
  GatherDims& g = inst.gather;
  ScatterDims& s = inst.scatter;
  // Gather and scatter dimensions only on their ops (the printer writes them
  // there alone); elsewhere they are unknown attributes, kept as written.
  if (gather) {
    if (name == "offset_dims") return parse_int_list(g.offset_dims);
    if (name == "collapsed_slice_dims") return parse_int_list(g.collapsed_slice_dims);
    if (name == "start_index_map") return parse_int_list(g.start_index_map);
    if (name == "operand_batching_dims") return parse_int_list(g.operand_batching_dims);
    if (name == "start_indices_batching_dims") return parse_int_list(g.start_indices_batching_dims);
    if (name == "slice_sizes") return parse_int_list(g.slice_sizes);
    if (name == "index_vector_dim") return parse_int(g.index_vector_dim);
    if (name == "indices_are_sorted") return parse_bool(g.indices_are_sorted);
  }
  if (scatter) {
    if (name == "update_window_dims") return parse_int_list(s.update_window_dims);
    if (name == "inserted_window_dims") return parse_int_list(s.inserted_window_dims);
    if (name == "scatter_dims_to_operand_dims") return parse_int_list(s.scatter_dims_to_operand_dims);
    if (name == "input_batching_dims") return parse_int_list(s.input_batching_dims);
    if (name == "scatter_indices_batching_dims") return parse_int_list(s.scatter_indices_batching_dims);
    if (name == "unique_indices") return parse_bool(s.unique_indices);
    if (name == "index_vector_dim") return parse_int(s.index_vector_dim);
    if (name == "indices_are_sorted") return parse_bool(s.indices_are_sorted);
  }
  // windows, padding, convolution
  if (name == "window") return parse_window(inst.window);
  if (name == "padding" && (op == Opcode::kPad || is(TokenKind::kIdent) || is(TokenKind::kInt))) {
    return parse_padding(inst.padding);
  }
  if (name == "dim_labels") {
    // b01f_01io->b01f: several tokens; keep the spelling without spaces.
    size_t begin = cur_.begin;
    if (!skip_value()) return false;
    inst.dim_labels.clear();
    for (char c : one_line(text_.substr(begin, prev_.end - begin))) {
      if (c != ' ') inst.dim_labels += c;
    }
    return true;
  }
  if (name == "feature_group_count") return parse_int(inst.feature_group_count);
  if (name == "batch_group_count") return parse_int(inst.batch_group_count);
  // sort, topk
  if (name == "is_stable") {
    bool v = false;
    if (!parse_bool(v)) return false;
    inst.is_stable = v;
    return true;
  }
  if (name == "k") {
    int64_t v = 0;
    if (!parse_int(v)) return false;
    inst.k = v;
    return true;
  }
  if (name == "largest") {
    bool v = false;
    if (!parse_bool(v)) return false;
    inst.largest = v;
    return true;
  }
  // random numbers, reduce-precision
  if (name == "algorithm" && op == Opcode::kRngBitGenerator) {
    return parse_string_or_ident(inst.rng_algorithm, "an rng algorithm such as rng_default");
  }
  if (name == "distribution") return parse_string_or_ident(inst.rng_distribution, "rng_uniform or rng_normal");
  if (name == "exponent_bits" || name == "mantissa_bits") {
    int64_t v = 0;
    if (!parse_int(v)) return false;
    (name == "exponent_bits" ? inst.exponent_bits : inst.mantissa_bits) = v;
    return true;
  }
  handled = false;
  return true;
}

}  // namespace sl::hlo::parser_internal
