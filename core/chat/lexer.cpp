#include "memfit/utf8.h"
#include "lexer.h"

#include <cctype>
#include <cstdint>

#include "text.h"

namespace memfit::chat {
namespace {

std::string normalize_newlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

class Lexer {
 public:
  explicit Lexer(std::string source) : src_(std::move(source)) {}

  std::vector<Token> run() {
    bool line_starting = true;
    while (pos_ < src_.size()) {
      const std::size_t tag = next_tag(pos_);
      std::string text = src_.substr(pos_, (tag == std::string::npos ? src_.size() : tag) - pos_);
      if (tag == std::string::npos) {
        emit_text(std::move(text), pos_);
        break;
      }
      const char kind = src_[tag + 1];  // '{', '%' or '#'
      const char modifier = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
      const bool has_modifier = modifier == '-' || modifier == '+';
      if (modifier == '-') {
        text = text::strip(text, text::Side::kRight);
      } else if (modifier != '+' && kind != '{') {
        // lstrip_blocks: only spaces and tabs between the line's start and the tag.
        const std::size_t line_start = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if ((line_start > 0 || line_starting) &&
            text.find_first_not_of(" \t", line_start) == std::string::npos)
          text.resize(line_start);
      }
      emit_text(std::move(text), pos_);
      pos_ = tag + 2 + (has_modifier ? 1 : 0);
      if (kind == '#') {
        line_starting = skip_comment(tag);
      } else {
        line_starting = lex_tag(kind == '%', tag);
      }
    }
    out_.push_back({TokenKind::kEnd, "", position_of(src_.size())});
    return std::move(out_);
  }

 private:
  std::size_t next_tag(std::size_t from) const {
    for (std::size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return std::string::npos;
  }

  Position position_of(std::size_t offset) {
    // Positions are mostly asked for in increasing order: advance a cursor (from the start again
    // for an earlier one, which only an error message asks for).
    if (offset < cursor_) {
      cursor_ = 0;
      cursor_line_ = cursor_column_ = 1;
    }
    for (; cursor_ < offset && cursor_ < src_.size(); ++cursor_) {
      if (src_[cursor_] == '\n') {
        ++cursor_line_;
        cursor_column_ = 1;
      } else if ((static_cast<unsigned char>(src_[cursor_]) & 0xC0) != 0x80) {
        ++cursor_column_;
      }
    }
    return {cursor_line_, cursor_column_};
  }

  void emit_text(std::string text, std::size_t at) {
    if (!text.empty()) out_.push_back({TokenKind::kText, std::move(text), position_of(at)});
  }

  [[noreturn]] void fail(std::size_t at, const std::string& message) {
    throw TemplateError(ErrorCode::kTemplateSyntax, at_position(position_of(at)) + message);
  }

  // After a tag's end: `-` strips all following whitespace, trim_blocks one newline (blocks and
  // comments only). Returns whether what was consumed ends a line (Jinja's line_starting).
  bool after_end(char modifier, bool trim_newline) {
    bool ended_line = false;
    if (modifier == '-') {
      while (pos_ < src_.size() && is_space(src_[pos_])) ended_line = src_[pos_++] == '\n';
    } else if (modifier != '+' && trim_newline && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
      ended_line = true;
    }
    return ended_line;
  }

  bool skip_comment(std::size_t tag) {
    const std::size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) fail(tag, "the comment opened here has no closing '#}'");
    const char modifier = end > pos_ && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : '\0';
    pos_ = end + 2;
    return after_end(modifier, true);
  }

  bool lex_tag(bool block, std::size_t tag) {
    out_.push_back({block ? TokenKind::kBlockBegin : TokenKind::kVariableBegin, block ? "{%" : "{{", position_of(tag)});
    const char* close = block ? "%}" : "}}";
    int brackets = 0;
    for (;;) {
      while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
      if (pos_ >= src_.size())
        fail(tag, std::string("the tag opened here has no closing '") + close + "'");
      if (brackets == 0) {
        char modifier = '\0';
        std::size_t at = pos_;
        if ((src_[at] == '-' || src_[at] == '+') && src_.compare(at + 1, 2, close) == 0) modifier = src_[at++];
        if (src_.compare(at, 2, close) == 0) {
          out_.push_back({block ? TokenKind::kBlockEnd : TokenKind::kVariableEnd, close, position_of(pos_)});
          pos_ = at + 2;
          return after_end(modifier, block);
        }
      }
      lex_one(brackets);
    }
  }

  void lex_one(int& brackets) {
    const std::size_t start = pos_;
    const char c = src_[pos_];
    if (is_name_start(c)) {
      while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
      out_.push_back({TokenKind::kName, src_.substr(start, pos_ - start), position_of(start)});
    } else if (is_digit(c)) {
      lex_number(start);
    } else if (c == '\'' || c == '"') {
      lex_string(start);
    } else {
      static const char* const kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
      std::string op(1, c);
      for (const char* two : kTwo)
        if (src_.compare(pos_, 2, two) == 0) op = two;
      if (op.size() == 1 && std::string("+-*/%~<>=.,:|()[]{}").find(c) == std::string::npos)
        fail(start, std::string("unexpected character '") + c + "' inside a tag");
      if (c == '(' || c == '[' || c == '{') ++brackets;
      if ((c == ')' || c == ']' || c == '}') && brackets > 0) --brackets;
      pos_ += op.size();
      out_.push_back({TokenKind::kOperator, op, position_of(start)});
    }
  }

  void lex_number(std::size_t start) {
    bool is_float = false;
    auto digits = [&] {
      while (pos_ < src_.size() && (is_digit(src_[pos_]) || src_[pos_] == '_')) ++pos_;
    };
    digits();
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
      is_float = true;
      ++pos_;
      digits();
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      std::size_t at = pos_ + 1;
      if (at < src_.size() && (src_[at] == '+' || src_[at] == '-')) ++at;
      if (at < src_.size() && is_digit(src_[at])) {
        is_float = true;
        pos_ = at;
        digits();
      }
    }
    std::string text;
    for (std::size_t i = start; i < pos_; ++i)
      if (src_[i] != '_') text += src_[i];
    out_.push_back({is_float ? TokenKind::kFloat : TokenKind::kInteger, text, position_of(start)});
  }

  std::uint32_t hex_escape(std::size_t digits, std::size_t at) {
    if (pos_ + digits > src_.size()) fail(at, "truncated \\x, \\u or \\U escape in a string");
    std::uint32_t cp = 0;
    for (std::size_t i = 0; i < digits; ++i) {
      const char h = src_[pos_++];
      if (!std::isxdigit(static_cast<unsigned char>(h))) fail(at, "bad hex digit in a string escape");
      cp = cp * 16 + static_cast<std::uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
    }
    return cp;
  }

  // Python's unicode-escape decoding, as Jinja applies it to string literals.
  void lex_string(std::size_t start) {
    const char quote = src_[pos_++];
    std::string value;
    for (;;) {
      if (pos_ >= src_.size()) fail(start, "the string that starts here is not closed");
      const char c = src_[pos_++];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (pos_ >= src_.size()) fail(start, "the string that starts here is not closed");
      const char e = src_[pos_++];
      switch (e) {
        case '\n': break;
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'v': value += '\v'; break;
        case 'a': value += '\a'; break;
        case 'x': memfit::append_utf8(value, hex_escape(2, start)); break;
        case 'u': memfit::append_utf8(value, hex_escape(4, start)); break;
        case 'U': memfit::append_utf8(value, hex_escape(8, start)); break;
        default:
          if (e >= '0' && e <= '7') {
            std::uint32_t cp = static_cast<std::uint32_t>(e - '0');
            for (int k = 0; k < 2 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7'; ++k)
              cp = cp * 8 + static_cast<std::uint32_t>(src_[pos_++] - '0');
            memfit::append_utf8(value, cp);
          } else {
            value += '\\';
            value += e;
          }
      }
    }
    out_.push_back({TokenKind::kString, std::move(value), position_of(start)});
  }

  std::string src_;
  std::size_t pos_ = 0;
  std::vector<Token> out_;
  std::size_t cursor_ = 0;
  int cursor_line_ = 1, cursor_column_ = 1;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(normalize_newlines(source)).run(); }

const char* token_kind_name(TokenKind kind) {
  switch (kind) {
    case TokenKind::kText: return "template text";
    case TokenKind::kVariableBegin: return "'{{'";
    case TokenKind::kVariableEnd: return "'}}'";
    case TokenKind::kBlockBegin: return "'{%'";
    case TokenKind::kBlockEnd: return "'%}'";
    case TokenKind::kName: return "a name";
    case TokenKind::kString: return "a string";
    case TokenKind::kInteger: return "an integer";
    case TokenKind::kFloat: return "a float";
    case TokenKind::kOperator: return "an operator";
    case TokenKind::kEnd: return "the end of the template";
  }
  return "a token";
}

}  // namespace memfit::chat
