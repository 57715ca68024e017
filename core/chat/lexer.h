// core/chat/lexer.h — a chat template's text split into Jinja tokens, with the whitespace control
// transformers' environment applies: trim_blocks (the first newline after a block or comment tag
// is removed), lstrip_blocks (spaces and tabs before a block or comment tag at the start of a
// line are removed), `-` on a tag strips all whitespace on that side, `+` turns the two off; one
// trailing newline of the template is dropped and \r\n / \r read as \n (Jinja's
// keep_trailing_newline=False and newline_sequence).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "template_error.h"

namespace memfit::chat {

enum class TokenKind {
  kText,            // literal template text
  kVariableBegin,   // {{
  kVariableEnd,     // }}
  kBlockBegin,      // {%
  kBlockEnd,        // %}
  kName, kString, kInteger, kFloat,
  kOperator,        // + - * / // % ** ~ == != < > <= >= = . , : | ( ) [ ] { }
  kEnd,
};

struct Token {
  TokenKind kind;
  std::string text;  // a name, an operator, a string's decoded value, a number's digits, text
  Position at;
};

// Throws TemplateError(kTemplateSyntax) for an unclosed tag, comment or string.
std::vector<Token> tokenize(std::string_view source);

const char* token_kind_name(TokenKind kind);

}  // namespace memfit::chat
