#pragma once
// Token stream of the HLO text parser (internal to core/hlo). The lexer works
// on demand over the source text: tokens are views into it (plain values,
// cheap to copy), so lexing a large module allocates nothing but an error
// message or a string literal with escapes. Bad bytes become kError tokens,
// never exceptions.

#include <cstddef>
#include <string>
#include <string_view>

#include "core/hlo/module.h"

namespace sl::hlo {

enum class TokenKind {
  kEof,
  kError,     // `value` holds the message
  kIdent,     // f32, add, ROOT, kLoop, all-gather-start, name.1
  kName,      // %name (text without '%')
  kInt,       // 12, -3
  kFloat,     // 1.5, -2e3, -inf, -nan
  kString,    // "..." (`value` holds the unescaped contents) or '...' (no escapes)
  kLbrace, kRbrace, kLbracket, kRbracket, kLparen, kRparen,
  kComma, kColon, kEquals,
  kArrow,     // ->
  kLeq,       // <=
  kEllipsis,  // ...
  kPunct,     // any other printable ASCII character (only seen in skipped text)
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  std::string_view text;  // source text of the token (names without '%')
  // kString: unescaped contents; kError: message. Points into the source or
  // into the lexer's scratch buffer, so it is valid only until the next call
  // to Lexer::next() (the parser reads it at once and never peeks past a
  // string or error token).
  std::string_view value;
  SourceLoc loc;
  size_t begin = 0;       // byte offsets of the whole token in the source
  size_t end = 0;
};

class Lexer {
 public:
  struct State {
    size_t pos = 0;
    int line = 1;
    int col = 1;
  };

  explicit Lexer(std::string_view text) : text_(text) {}

  Token next();
  State state() const { return state_; }
  void restore(State state) { state_ = state; }
  std::string_view text() const { return text_; }

 private:
  char at(size_t pos) const { return pos < text_.size() ? text_[pos] : '\0'; }
  bool at_end() const { return state_.pos >= text_.size(); }
  void bump();                       // advance one byte, tracking line/col
  // Advance to `end` over bytes known to hold no newline (one column each).
  void skip_to(size_t end) {
    state_.col += static_cast<int>(end - state_.pos);
    state_.pos = end;
  }
  size_t ident_end(size_t from) const;  // end of the identifier characters from `from`
  bool skip_trivia(Token& error);    // whitespace and comments; false on an unterminated comment
  Token make(TokenKind kind, size_t begin, SourceLoc loc);
  Token lex_number(size_t begin, SourceLoc loc);
  Token lex_string(size_t begin, SourceLoc loc);
  std::string_view keep(std::string text);  // into scratch_; see Token::value

  std::string_view text_;
  State state_;
  std::string scratch_;  // unescaped string or error message of the last token
};

std::string_view token_kind_name(TokenKind kind);

// C-style escaping for printing strings back ("\"", "\\", "\n", "\xNN").
std::string escape_string(std::string_view raw);

}  // namespace sl::hlo
