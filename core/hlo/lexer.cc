#include "core/hlo/lexer.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace sl::hlo {
namespace {

constexpr bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Identifier characters by byte: one table load per byte in the hot loop.
constexpr std::array<bool, 256> kIdentChar = [] {
  std::array<bool, 256> table{};
  for (int c = 0; c < 256; ++c) {
    const char ch = static_cast<char>(c);
    // '#' continues a name: `%t#2` is XLA's short form for a tuple element.
    table[static_cast<size_t>(c)] = is_ident_start(ch) || is_digit(ch) || ch == '.' || ch == '-' || ch == '$' || ch == '#';
  }
  return table;
}();
bool is_ident_char(char c) { return kIdentChar[static_cast<unsigned char>(c)]; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

std::string describe_byte(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", static_cast<unsigned>(u));
}

}  // namespace

std::string_view token_kind_name(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEof: return "end of file";
    case TokenKind::kError: return "invalid token";
    case TokenKind::kIdent: return "identifier";
    case TokenKind::kName: return "%name";
    case TokenKind::kInt: return "integer";
    case TokenKind::kFloat: return "number";
    case TokenKind::kString: return "string";
    case TokenKind::kLbrace: return "'{'";
    case TokenKind::kRbrace: return "'}'";
    case TokenKind::kLbracket: return "'['";
    case TokenKind::kRbracket: return "']'";
    case TokenKind::kLparen: return "'('";
    case TokenKind::kRparen: return "')'";
    case TokenKind::kComma: return "','";
    case TokenKind::kColon: return "':'";
    case TokenKind::kEquals: return "'='";
    case TokenKind::kArrow: return "'->'";
    case TokenKind::kLeq: return "'<='";
    case TokenKind::kEllipsis: return "'...'";
    case TokenKind::kPunct: return "punctuation";
  }
  return "token";
}

void Lexer::bump() {
  if (state_.pos >= text_.size()) return;
  if (text_[state_.pos] == '\n') {
    ++state_.line;
    state_.col = 1;
  } else {
    ++state_.col;
  }
  ++state_.pos;
}

bool Lexer::skip_trivia(Token& error) {
  while (!at_end()) {
    char c = text_[state_.pos];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++state_.pos;
      ++state_.col;
    } else if (c == '\n') {
      ++state_.pos;
      ++state_.line;
      state_.col = 1;
    } else if (c == '/' && at(state_.pos + 1) == '/') {
      // Ends at a line feed or a carriage return (XLA reads old Mac line ends too).
      size_t end = text_.find_first_of("\n\r", state_.pos);
      skip_to(end == std::string_view::npos ? text_.size() : end);
    } else if (c == '/' && at(state_.pos + 1) == '*') {
      SourceLoc loc{state_.line, state_.col};
      size_t begin = state_.pos;
      bump();
      bump();
      for (;;) {
        if (at_end()) {
          error = make(TokenKind::kError, begin, loc);
          error.value = "unterminated /* comment";
          return false;
        }
        if (text_[state_.pos] == '*' && at(state_.pos + 1) == '/') {
          bump();
          bump();
          break;
        }
        bump();
      }
    } else {
      break;
    }
  }
  return true;
}

size_t Lexer::ident_end(size_t from) const {
  size_t end = from;
  while (end < text_.size() && is_ident_char(text_[end])) {
    if (text_[end] == '-' && at(end + 1) == '>') break;
    ++end;
  }
  return end;
}

Token Lexer::make(TokenKind kind, size_t begin, SourceLoc loc) {
  Token t;
  t.kind = kind;
  t.loc = loc;
  t.begin = begin;
  t.end = state_.pos;
  t.text = text_.substr(begin, state_.pos - begin);
  return t;
}

Token Lexer::next() {
  Token error;
  if (!skip_trivia(error)) return error;
  SourceLoc loc{state_.line, state_.col};
  size_t begin = state_.pos;
  if (at_end()) return make(TokenKind::kEof, begin, loc);
  char c = text_[state_.pos];

  if (is_ident_start(c)) {
    skip_to(ident_end(begin));
    return make(TokenKind::kIdent, begin, loc);
  }
  if (c == '%') {
    size_t name_begin = begin + 1;
    skip_to(ident_end(name_begin));
    Token t = make(TokenKind::kName, begin, loc);
    t.text = text_.substr(name_begin, state_.pos - name_begin);
    if (t.text.empty()) {
      t.kind = TokenKind::kError;
      t.value = "expected a name after '%'";
    }
    return t;
  }
  if (is_digit(c) || (c == '-' && (is_digit(at(begin + 1)) || at(begin + 1) == '.'))) {
    return lex_number(begin, loc);
  }
  if (c == '-' && (at(begin + 1) == 'i' || at(begin + 1) == 'n')) {
    // -inf / -nan
    bump();
    while (!at_end() && is_ident_char(text_[state_.pos])) bump();
    Token t = make(TokenKind::kFloat, begin, loc);
    if (t.text != "-inf" && t.text != "-nan") {
      t.kind = TokenKind::kError;
      t.value = keep(fmt::format("unexpected '{}'", t.text));
    }
    return t;
  }
  if (c == '"') return lex_string(begin, loc);
  if (c == '\'') {
    // 'name': mesh axis names in replica groups and shardings. No escapes;
    // a quote without its partner on the line stays punctuation.
    size_t close = begin + 1;
    while (close < text_.size() && text_[close] != '\'' && text_[close] != '\n') ++close;
    if (close < text_.size() && text_[close] == '\'') {
      skip_to(close + 1);
      Token t = make(TokenKind::kString, begin, loc);
      t.value = text_.substr(begin + 1, close - begin - 1);
      return t;
    }
  }

  bump();
  switch (c) {
    case '{': return make(TokenKind::kLbrace, begin, loc);
    case '}': return make(TokenKind::kRbrace, begin, loc);
    case '[': return make(TokenKind::kLbracket, begin, loc);
    case ']': return make(TokenKind::kRbracket, begin, loc);
    case '(': return make(TokenKind::kLparen, begin, loc);
    case ')': return make(TokenKind::kRparen, begin, loc);
    case ',': return make(TokenKind::kComma, begin, loc);
    case ':': return make(TokenKind::kColon, begin, loc);
    case '=': return make(TokenKind::kEquals, begin, loc);
    case '-':
      if (at(state_.pos) == '>') {
        bump();
        return make(TokenKind::kArrow, begin, loc);
      }
      return make(TokenKind::kPunct, begin, loc);
    case '<':
      if (at(state_.pos) == '=') {
        bump();
        return make(TokenKind::kLeq, begin, loc);
      }
      return make(TokenKind::kPunct, begin, loc);
    case '.':
      if (at(state_.pos) == '.' && at(state_.pos + 1) == '.') {
        bump();
        bump();
        return make(TokenKind::kEllipsis, begin, loc);
      }
      return make(TokenKind::kPunct, begin, loc);
    default:
      break;
  }
  auto u = static_cast<unsigned char>(c);
  Token t = make(u > 0x20 && u < 0x7f ? TokenKind::kPunct : TokenKind::kError, begin, loc);
  if (t.kind == TokenKind::kError) t.value = keep(fmt::format("unexpected {}", describe_byte(c)));
  return t;
}

Token Lexer::lex_number(size_t begin, SourceLoc loc) {
  bool is_float = false;
  size_t end = state_.pos;
  auto skip_digits = [&] {
    while (end < text_.size() && is_digit(text_[end])) ++end;
  };
  if (text_[end] == '-') ++end;
  skip_digits();
  if (at(end) == '.' && at(end + 1) != '.') {
    is_float = true;
    ++end;
    skip_digits();
  }
  if (at(end) == 'e' || at(end) == 'E') {
    size_t p = end + 1;
    if (at(p) == '+' || at(p) == '-') ++p;
    if (is_digit(at(p))) {
      is_float = true;
      end = p;
      skip_digits();
    }
  }
  skip_to(end);
  Token t = make(is_float ? TokenKind::kFloat : TokenKind::kInt, begin, loc);
  // Digits glued to letters (XLA's `window={size=2x2}`, `padding=0_0x1_1`)
  // form one word; the grammar rejects it wherever a number is required.
  if (!at_end() && is_ident_start(text_[state_.pos])) {
    skip_to(ident_end(state_.pos));
    t = make(TokenKind::kIdent, begin, loc);
  }
  return t;
}

Token Lexer::lex_string(size_t begin, SourceLoc loc) {
  bump();  // opening quote
  // Most strings hold no escapes (nor newlines, which bump() counts): their
  // value is a view of the source. Others are unescaped into scratch_.
  const size_t content = state_.pos;
  size_t run_end = content;
  while (run_end < text_.size() && text_[run_end] != '"' && text_[run_end] != '\\' && text_[run_end] != '\0' &&
         text_[run_end] != '\n') {
    ++run_end;
  }
  skip_to(run_end);
  if (at(run_end) == '"') {
    bump();
    Token t = make(TokenKind::kString, begin, loc);
    t.value = text_.substr(content, run_end - content);
    return t;
  }
  std::string& value = scratch_;
  value.assign(text_.substr(content, run_end - content));
  for (;;) {
    if (at_end()) {
      Token t = make(TokenKind::kError, begin, loc);
      t.value = "unterminated string";
      return t;
    }
    char c = text_[state_.pos];
    if (c == '"') {
      bump();
      break;
    }
    if (c == '\0') {
      Token t = make(TokenKind::kError, begin, loc);
      t.value = "NUL byte in string";
      return t;
    }
    if (c != '\\') {
      value += c;
      bump();
      continue;
    }
    SourceLoc esc_loc{state_.line, state_.col};
    size_t esc_begin = state_.pos;
    bump();
    char e = at(state_.pos);
    bump();
    switch (e) {
      case 'n': value += '\n'; break;
      case 't': value += '\t'; break;
      case 'r': value += '\r'; break;
      case 'a': value += '\a'; break;
      case 'b': value += '\b'; break;
      case 'f': value += '\f'; break;
      case 'v': value += '\v'; break;
      case '\\': value += '\\'; break;
      case '"': value += '"'; break;
      case '\'': value += '\''; break;
      case '?': value += '?'; break;
      case '/': value += '/'; break;
      case 'u': {
        // JSON's \uXXXX (backend_config text), stored as UTF-8.
        uint32_t cp = 0;
        for (int n = 0; n < 4; ++n) {
          if (!is_hex(at(state_.pos))) {
            Token t = make(TokenKind::kError, esc_begin, esc_loc);
            t.value = "\\u escape needs 4 hex digits";
            return t;
          }
          cp = cp * 16 + static_cast<uint32_t>(hex_value(at(state_.pos)));
          bump();
        }
        if (cp < 0x80) {
          value += static_cast<char>(cp);
        } else if (cp < 0x800) {
          value += static_cast<char>(0xc0 | (cp >> 6));
          value += static_cast<char>(0x80 | (cp & 0x3f));
        } else {
          value += static_cast<char>(0xe0 | (cp >> 12));
          value += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
          value += static_cast<char>(0x80 | (cp & 0x3f));
        }
        break;
      }
      case 'x': {
        int v = 0;
        int n = 0;
        while (n < 2 && is_hex(at(state_.pos))) {
          v = v * 16 + hex_value(at(state_.pos));
          bump();
          ++n;
        }
        if (n == 0) {
          Token t = make(TokenKind::kError, esc_begin, esc_loc);
          t.value = "\\x escape without hex digits";
          return t;
        }
        value += static_cast<char>(v);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0';
          for (int n = 0; n < 2 && at(state_.pos) >= '0' && at(state_.pos) <= '7'; ++n) {
            v = v * 8 + (at(state_.pos) - '0');
            bump();
          }
          value += static_cast<char>(v & 0xff);
          break;
        }
        Token t = make(TokenKind::kError, esc_begin, esc_loc);
        t.value = keep(fmt::format("unknown escape sequence \\{}", describe_byte(e)));
        return t;
    }
  }
  Token t = make(TokenKind::kString, begin, loc);
  t.value = value;
  return t;
}

std::string_view Lexer::keep(std::string text) {
  scratch_ = std::move(text);
  return scratch_;
}

std::string escape_string(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() + 2);
  for (char c : raw) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
          out += fmt::format("\\x{:02x}", static_cast<unsigned>(u));
        } else {
          out += c;
        }
      }
    }
  }
  return out;
}

}  // namespace sl::hlo
