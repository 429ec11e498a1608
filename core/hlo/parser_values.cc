// HLO text parser: shapes, integers, lists, constant literals, and skipping
// of values the tool does not read.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/hlo/parser_impl.h"

namespace sl::hlo::parser_internal {
namespace {

// The magnitude from which a value rounds to infinity (max finite plus half an
// ulp) for the IEEE-like types XLA checks; infinity for the others.
double float_overflow_threshold(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16: return 65520.0;
    case PrimitiveType::kBF16: return std::ldexp(2.0 - std::ldexp(1.0, -8), 127);
    case PrimitiveType::kF32: return std::ldexp(2.0 - std::ldexp(1.0, -24), 127);
    default: return std::numeric_limits<double>::infinity();
  }
}

// `nan(0x7f)`: the payload must be non-zero and fit the mantissa; the f8
// types whose only NaN is one bit pattern take none.
std::string check_nan_payload(std::string_view text, PrimitiveType type) {
  int mantissa = 0;
  switch (type) {
    case PrimitiveType::kF16: mantissa = 10; break;
    case PrimitiveType::kBF16: mantissa = 7; break;
    case PrimitiveType::kF32: mantissa = 23; break;
    case PrimitiveType::kF64: mantissa = 52; break;
    case PrimitiveType::kF8E5M2: mantissa = 2; break;
    case PrimitiveType::kF8E4M3: mantissa = 3; break;
    case PrimitiveType::kF8E3M4: mantissa = 4; break;
    default: return fmt::format("{} has no NaN payloads", primitive_type_name(type));
  }
  std::string_view digits = text;
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
    base = 16;
  }
  uint64_t payload = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), payload, base);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    return fmt::format("NaN payload {} is not a number", text.substr(0, 40));
  }
  if (payload == 0 || payload >= (uint64_t{1} << mantissa)) {
    return fmt::format("NaN payload {} does not fit the {} bits of {}'s mantissa (it must be non-zero)",
                       text.substr(0, 40), mantissa, primitive_type_name(type));
  }
  return {};
}

bool is_opener(TokenKind k) {
  return k == TokenKind::kLbrace || k == TokenKind::kLbracket || k == TokenKind::kLparen;
}
bool is_closer(TokenKind k) {
  return k == TokenKind::kRbrace || k == TokenKind::kRbracket || k == TokenKind::kRparen;
}
TokenKind closer_of(TokenKind k) {
  if (k == TokenKind::kLbrace) return TokenKind::kRbrace;
  if (k == TokenKind::kLbracket) return TokenKind::kRbracket;
  return TokenKind::kRparen;
}

// Total bytes of a shape, or false on int64 overflow.
bool checked_byte_size(const Shape& shape, int64_t& bytes) {
  if (!shape.is_tuple()) {
    int64_t elements = 1;
    for (int64_t d : shape.dims) {
      if (__builtin_mul_overflow(elements, d, &elements)) return false;
    }
    return !__builtin_mul_overflow(elements, primitive_type_bytes(shape.type), &bytes);
  }
  bytes = 0;
  for (const Shape& e : shape.elements) {
    int64_t b = 0;
    if (!checked_byte_size(e, b) || __builtin_add_overflow(bytes, b, &bytes)) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

bool Parser::parse_int(int64_t& value) {
  if (!is(TokenKind::kInt)) return fail_expected("an integer");
  auto [ptr, ec] = std::from_chars(cur_.text.data(), cur_.text.data() + cur_.text.size(), value);
  if (ec == std::errc::result_out_of_range) return fail_here(fmt::format("integer {} is out of range", cur_.text));
  if (ec != std::errc() || ptr != cur_.text.data() + cur_.text.size()) return fail_expected("an integer");
  advance();
  return true;
}

bool Parser::parse_bool(bool& value) {
  if (is_ident("true") || is_ident("false")) {
    value = cur_.text == "true";
    advance();
    return true;
  }
  return fail_expected("true or false");
}

bool Parser::parse_int_list(std::vector<int64_t>& values) {
  values.clear();
  if (!expect(TokenKind::kLbrace, "'{' to open a list of integers")) return false;
  if (accept(TokenKind::kRbrace)) return true;
  for (;;) {
    int64_t v = 0;
    if (!parse_int(v)) return false;
    values.push_back(v);
    if (accept(TokenKind::kComma)) continue;
    return expect(TokenKind::kRbrace, "',' or '}' in a list of integers");
  }
}

bool Parser::parse_int_list_list(std::vector<std::vector<int64_t>>& values) {
  values.clear();
  if (!expect(TokenKind::kLbrace, "'{' to open a list of lists")) return false;
  if (accept(TokenKind::kRbrace)) return true;
  for (;;) {
    values.emplace_back();
    if (!parse_int_list(values.back())) return false;
    if (accept(TokenKind::kComma)) continue;
    return expect(TokenKind::kRbrace, "',' or '}' in a list of lists");
  }
}

bool Parser::parse_bracket_int_list(std::vector<int64_t>& values) {
  values.clear();
  if (!expect(TokenKind::kLbracket, "'['")) return false;
  if (accept(TokenKind::kRbracket)) return true;
  for (;;) {
    int64_t v = 0;
    if (!parse_int(v)) return false;
    values.push_back(v);
    if (accept(TokenKind::kComma)) continue;
    return expect(TokenKind::kRbracket, "',' or ']'");
  }
}

bool Parser::parse_shape(Shape& shape, int depth, bool before_body) {
  if (depth >= kMaxNesting) return fail_here(fmt::format("shape nests deeper than {} levels", kMaxNesting));
  if (is(TokenKind::kIdent)) return parse_array_shape(shape, before_body);
  if (!is(TokenKind::kLparen)) return fail_expected("a shape");
  SourceLoc loc = cur_.loc;
  advance();
  shape = Shape::tuple({});
  if (!accept(TokenKind::kRparen)) {
    for (;;) {
      Shape element;
      if (!parse_shape(element, depth + 1)) return false;
      shape.elements.push_back(std::move(element));
      if (accept(TokenKind::kComma)) continue;
      if (!expect(TokenKind::kRparen, "',' or ')' in a tuple shape")) return false;
      break;
    }
  }
  int64_t bytes = 0;
  if (depth == 0 && !checked_byte_size(shape, bytes)) return fail(loc, "tuple shape is too large (byte size overflows)");
  return true;
}

bool Parser::parse_array_shape(Shape& shape, bool before_body) {
  auto type = parse_primitive_type(cur_.text);
  if (!type) {
    if (peek_next().kind == TokenKind::kLbracket) {
      return fail_here(fmt::format("unknown element type '{}'", cur_.text.substr(0, 40)));
    }
    return fail_expected("a shape");
  }
  SourceLoc loc = cur_.loc;
  advance();
  if (!expect(TokenKind::kLbracket, "'[' after the element type")) return false;
  // Cleared rather than replaced, so a reused shape keeps its capacity.
  shape.type = *type;
  shape.dims.clear();
  shape.elements.clear();
  shape.dynamic_dims.clear();
  if (!accept(TokenKind::kRbracket)) {
    if (shape.dims.capacity() == 0) shape.dims.reserve(4);  // one allocation for typical ranks
    for (;;) {
      SourceLoc dim_loc = cur_.loc;
      int64_t d = 0;
      int8_t dynamic = 0;
      if (is(TokenKind::kPunct) && cur_.text == "?") {
        dynamic = 2;
        advance();
      } else {
        if (accept(TokenKind::kLeq)) dynamic = 1;
        if (!parse_int(d)) return false;
      }
      if (d < 0) return fail(dim_loc, fmt::format("dimension size {} is negative", d));
      if (dynamic != 0) shape.dynamic_dims.resize(shape.dims.size() + 1, 0);
      if (!shape.dynamic_dims.empty()) shape.dynamic_dims.resize(shape.dims.size() + 1, 0);
      if (dynamic != 0) shape.dynamic_dims.back() = dynamic;
      shape.dims.push_back(d);
      if (accept(TokenKind::kComma)) continue;
      if (!expect(TokenKind::kRbracket, "',' or ']' in the dimensions")) return false;
      break;
    }
  }
  if (*type == PrimitiveType::kToken && !shape.dims.empty()) return fail(loc, "token[] takes no dimensions");
  int64_t bytes = 0;
  if (!checked_byte_size(shape, bytes)) {
    return fail(loc, fmt::format("shape {} is too large (element count or byte size overflows int64)",
                                 to_string(shape).substr(0, 80)));
  }
  if (is(TokenKind::kLbrace)) return read_layout(before_body, shape);
  return true;
}

bool Parser::read_layout(bool before_body, Shape& shape) {
  const int64_t rank = shape.rank();
  if (before_body) {
    // `-> f32[4]{0} {` vs `-> f32[4] {`: a layout holds numbers and ':'; an
    // empty layout `{}` is one only when the body brace follows it.
    Lexer::State saved = lexer_.state();
    Token first = lexer_.next();
    Token second = lexer_.next();
    lexer_.restore(saved);
    bool layout = first.kind == TokenKind::kInt || first.kind == TokenKind::kColon ||
                  (first.kind == TokenKind::kRbrace && second.kind == TokenKind::kLbrace);
    if (!layout) return true;
  }
  // The minor-to-major order is kept (tiles and memory spaces are skipped);
  // it must be a permutation of the dimensions, as XLA's verifier requires
  // ({5,-1} is no layout).
  Lexer::State saved = lexer_.state();
  const SourceLoc at = cur_.loc;
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  std::vector<int64_t> minor_to_major;
  size_t count = 0;
  for (Token t = lexer_.next(); t.kind == TokenKind::kInt; t = lexer_.next()) {
    int64_t d = -1;
    std::from_chars(t.text.data(), t.text.data() + t.text.size(), d);
    if (d < 0 || d >= rank || seen[static_cast<size_t>(d)]) {
      lexer_.restore(saved);
      return fail(at, fmt::format("layout dimension {} is not a dimension of this rank-{} shape (or repeats)",
                                  t.text, rank));
    }
    seen[static_cast<size_t>(d)] = true;
    minor_to_major.push_back(d);
    ++count;
    Token sep = lexer_.next();
    if (sep.kind != TokenKind::kComma) break;
  }
  lexer_.restore(saved);
  if (count != 0 && static_cast<int64_t>(count) != rank) {
    return fail(at, fmt::format("layout names {} of the {} dimensions", count, rank));
  }
  if (rank > 1) shape.minor_to_major = std::move(minor_to_major);
  const size_t begin = cur_.begin;
  if (!skip_balanced()) return false;
  shape.layout = std::string(lexer_.text().substr(begin, prev_.end - begin));
  return true;
}

bool Parser::skip_balanced() {
  // The nesting is bounded, so the stack of open brackets lives on the C++
  // stack: this runs for every layout and metadata= of a large module.
  struct Open {  // no default initializers: the array is not cleared per call
    TokenKind closer;
    int line, col;
  };
  std::array<Open, kMaxNesting> stack;
  size_t depth = 0;
  for (;;) {
    if (is(TokenKind::kError)) return fail_here(std::string(cur_.value));
    if (is(TokenKind::kEof)) {
      SourceLoc loc = depth == 0 ? cur_.loc : SourceLoc{stack[depth - 1].line, stack[depth - 1].col};
      return fail(loc, "unbalanced bracket: not closed before end of file");
    }
    if (is_opener(cur_.kind)) {
      if (depth >= stack.size()) return fail_here(fmt::format("value nests deeper than {} levels", kMaxNesting));
      stack[depth++] = {closer_of(cur_.kind), cur_.loc.line, cur_.loc.col};
    } else if (is_closer(cur_.kind)) {
      if (depth == 0 || stack[depth - 1].closer != cur_.kind) {
        return fail_here(fmt::format("mismatched {}", token_kind_name(cur_.kind)));
      }
      --depth;
    } else if (depth == 0) {
      return fail_expected("'{', '[' or '('");
    }
    advance();
    if (depth == 0) return true;
  }
}

bool Parser::skip_value() {
  if (is(TokenKind::kComma) || is_closer(cur_.kind) || is(TokenKind::kEof)) return fail_expected("an attribute value");
  for (;;) {
    if (is(TokenKind::kError)) return fail_here(std::string(cur_.value));
    if (is_opener(cur_.kind)) {
      if (!skip_balanced()) return false;
    } else {
      advance();
    }
    // A value such as `[2,2]<=[4]T(1,0)` is several tokens on one line.
    if (is(TokenKind::kComma) || is_closer(cur_.kind) || is(TokenKind::kEof)) return true;
    if (cur_.loc.line != prev_.loc.line || is_ident("ROOT")) return true;
  }
}

std::string one_line(std::string_view text) {
  // Comments and runs of white space become one space; strings are copied
  // as they are, so a `//` inside quotes survives.
  std::string out;
  out.reserve(text.size());
  auto space = [&] {
    if (!out.empty() && out.back() != ' ') out += ' ';
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      // The lexer lets a string span lines: its line breaks become escapes,
      // so the text stays on one line and reads back as the same string.
      size_t j = i + 1;
      out += c;
      while (j < text.size() && text[j] != '"') {
        if (text[j] == '\\' && j + 1 < text.size()) {
          out.append(text.substr(j, 2));
          j += 2;
          continue;
        }
        out += text[j] == '\n' ? std::string_view("\\n") : text[j] == '\r' ? std::string_view("\\r") : text.substr(j, 1);
        ++j;
      }
      if (j < text.size()) out += '"';
      i = j;
    } else if (c == '\'') {
      size_t j = i + 1;
      while (j < text.size() && text[j] != c && text[j] != '\n') j += text[j] == '\\' ? 2 : 1;
      j = std::min(j, text.size() - 1);
      out.append(text.substr(i, j - i + 1));
      i = j;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
      space();
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      size_t close = text.find("*/", i + 2);
      i = close == std::string_view::npos ? text.size() : close + 1;
      space();
    } else if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space();
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool Parser::skip_one_value() {
  if (is(TokenKind::kError)) return fail_here(std::string(cur_.value));
  if (is_opener(cur_.kind)) return skip_balanced();
  if (is(TokenKind::kComma) || is_closer(cur_.kind) || is(TokenKind::kEof)) return fail_expected("a value");
  advance();
  return true;
}

bool Parser::parse_literal(Instruction& instruction) {
  const Shape& shape = instruction.shape;
  if (shape.is_token()) return fail(instruction.opcode_loc, "token constants are not supported");
  size_t begin = cur_.begin;
  if (shape.is_tuple()) {
    // `constant(( {1, 2}, {3} ))`: the leaves' values in order.
    std::vector<double> values;
    if (!parse_tuple_literal(shape, 0, values)) return false;
    instruction.literal = std::move(values);
  } else if (is(TokenKind::kLbrace) && peek_next().kind == TokenKind::kEllipsis) {
    // A large constant elided by the dump (`constant({...})`): no values.
    advance();
    advance();
    if (!expect(TokenKind::kRbrace, "'}' after '...'")) return false;
  } else {
    std::vector<double> values;
    if (!parse_literal_level(shape, 0, values)) return false;
    instruction.literal = std::move(values);
  }
  std::string_view written = trim(text_.substr(begin, prev_.end - begin));
  // A comment inside the literal could swallow the closing ')' when printed
  // on one line; leave the text empty so the printer writes the values
  // (tuple constants keep a one-line copy: the printer writes no tuples).
  if (shape.is_tuple()) {
    instruction.literal_text = one_line(written);
  } else if (written.find("//") == std::string_view::npos && written.find("/*") == std::string_view::npos) {
    instruction.literal_text = std::string(written);
  }
  return expect(TokenKind::kRparen, "')' after the constant value");
}

bool Parser::parse_tuple_literal(const Shape& shape, size_t depth, std::vector<double>& values) {
  if (depth >= static_cast<size_t>(kMaxNesting)) {
    return fail_here(fmt::format("constant nests deeper than {} levels", kMaxNesting));
  }
  SourceLoc loc = cur_.loc;
  if (!expect(TokenKind::kLparen, "'(' to open a tuple constant")) return false;
  for (size_t i = 0; i < shape.elements.size(); ++i) {
    if (i > 0 && !expect(TokenKind::kComma, "',' between the elements of a tuple constant")) return false;
    const Shape& element = shape.elements[i];
    if (element.is_token()) return fail_here("token constants are not supported");
    if (element.is_tuple() ? !parse_tuple_literal(element, depth + 1, values)
                           : !parse_literal_level(element, 0, values)) {
      return false;
    }
  }
  if (!is(TokenKind::kRparen)) {
    return fail(loc, fmt::format("tuple constant has more elements than its shape {}", to_string(shape)));
  }
  advance();
  return true;
}

bool Parser::parse_literal_level(const Shape& shape, size_t depth, std::vector<double>& values) {
  if (depth == shape.dims.size()) return parse_literal_scalar(shape.type, values);
  if (depth >= static_cast<size_t>(kMaxNesting)) {
    return fail_here(fmt::format("constant nests deeper than {} levels", kMaxNesting));
  }
  SourceLoc loc = cur_.loc;
  if (!accept(TokenKind::kLbrace)) return fail_expected(fmt::format("'{{' for dimension {} of the constant", depth));
  int64_t count = 0;
  if (!is(TokenKind::kRbrace)) {
    for (;;) {
      if (!parse_literal_level(shape, depth + 1, values)) return false;
      ++count;
      if (!accept(TokenKind::kComma)) break;
    }
  }
  if (!expect(TokenKind::kRbrace, "',' or '}' in the constant")) return false;
  if (count != shape.dims[depth]) {
    return fail(loc, fmt::format("constant has {} element(s) in dimension {}, but the shape {} says {}", count, depth,
                                 to_string(shape), shape.dims[depth]));
  }
  return true;
}

bool Parser::parse_literal_scalar(PrimitiveType type, std::vector<double>& values) {
  if (is_complex(type)) {
    // `(re, im)`: stored as two values, real part first.
    PrimitiveType part = type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    if (!expect(TokenKind::kLparen, "'(' to open a complex value")) return false;
    if (!parse_literal_scalar(part, values)) return false;
    if (!expect(TokenKind::kComma, "',' between the real and imaginary parts")) return false;
    if (!parse_literal_scalar(part, values)) return false;
    return expect(TokenKind::kRparen, "')' to close the complex value");
  }
  double v = 0;
  SourceLoc loc = cur_.loc;
  std::string_view text = cur_.text;
  if (is(TokenKind::kInt)) {
    int64_t i = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
    uint64_t u = 0;
    if (ec == std::errc()) {
      v = static_cast<double>(i);
    } else if (type == PrimitiveType::kU64 &&
               std::from_chars(text.data(), text.data() + text.size(), u).ec == std::errc()) {
      v = static_cast<double>(u);  // above int64's range; u64 holds it
    } else {
      if (is_integral(type) || type == PrimitiveType::kPred) {
        return fail_here(fmt::format("integer {} is out of range", text.substr(0, 40)));
      }
      auto r = std::from_chars(text.data(), text.data() + text.size(), v);
      if (r.ec != std::errc()) return fail_here(fmt::format("number {} is out of range", text.substr(0, 40)));
    }
  } else if (is(TokenKind::kFloat)) {
    if (text == "-inf") {
      v = -std::numeric_limits<double>::infinity();
    } else if (text == "-nan") {
      v = std::numeric_limits<double>::quiet_NaN();
    } else {
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc()) return fail_here(fmt::format("number {} is out of range", text.substr(0, 40)));
    }
  } else if (is_ident("true") || is_ident("false")) {
    v = text == "true" ? 1 : 0;
  } else if (is_ident("inf") || is_ident("nan")) {
    v = text == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else {
    return fail_expected("a constant value");
  }
  advance();
  if (std::isnan(v) && is(TokenKind::kLparen)) {
    // `nan(0x7f)`: a NaN with that payload (kept in the written text; the
    // value is a NaN either way).
    advance();
    if (!is(TokenKind::kInt) && !is(TokenKind::kIdent)) return fail_expected("a NaN payload");
    if (std::string problem = check_nan_payload(cur_.text, type); !problem.empty()) return fail_here(problem);
    advance();
    if (!expect(TokenKind::kRparen, "')' after the NaN payload")) return false;
  }
  if (std::isfinite(v) && std::fabs(v) >= float_overflow_threshold(type)) {
    return fail(loc, fmt::format("{} is out of range for {} (it rounds to infinity)", text.substr(0, 40),
                                 primitive_type_name(type)));
  }
  if (!is_floating(type)) {
    if (!std::isfinite(v) || v != std::floor(v)) {
      return fail(loc, fmt::format("{} is not a valid {} value", text.substr(0, 40), primitive_type_name(type)));
    }
    double lo = 0, hi = 0;
    switch (type) {
      case PrimitiveType::kPred: lo = 0; hi = 1; break;
      case PrimitiveType::kS8: lo = -128; hi = 127; break;
      case PrimitiveType::kS32: lo = -2147483648.0; hi = 2147483647.0; break;
      case PrimitiveType::kU32: lo = 0; hi = 4294967295.0; break;
      case PrimitiveType::kU64: lo = 0; hi = 18446744073709551615.0; break;
      default: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
    }
    if (v < lo || v > hi) {
      return fail(loc, fmt::format("{} is out of range for {}", text.substr(0, 40), primitive_type_name(type)));
    }
  }
  values.push_back(v);
  return true;
}

bool Parser::parse_slice(std::vector<SliceDim>& slice) {
  slice.clear();
  if (!expect(TokenKind::kLbrace, "'{' to open the slice")) return false;
  if (accept(TokenKind::kRbrace)) return true;
  for (;;) {
    SliceDim dim;
    if (!expect(TokenKind::kLbracket, "'[' to open a slice dimension")) return false;
    if (!parse_int(dim.start)) return false;
    if (!expect(TokenKind::kColon, "':' in the slice dimension")) return false;
    if (!parse_int(dim.limit)) return false;
    if (accept(TokenKind::kColon) && !parse_int(dim.stride)) return false;
    if (!expect(TokenKind::kRbracket, "']' to close the slice dimension")) return false;
    slice.push_back(dim);
    if (accept(TokenKind::kComma)) continue;
    return expect(TokenKind::kRbrace, "',' or '}' in the slice");
  }
}

}  // namespace sl::hlo::parser_internal
