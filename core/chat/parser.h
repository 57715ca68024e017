// core/chat/parser.h — tokens to statements: Jinja's grammar for the constructs chat templates
// use (docs/chat-templates.md lists them). Anything else is a kTemplateSyntax error that names
// the line, the column, what was expected and what was found.
#pragma once

#include <string_view>

#include "ast.h"

namespace memfit::chat {

// Nesting deeper than this (blocks inside blocks, parentheses inside parentheses) is refused,
// so a hostile template cannot exhaust the stack.
inline constexpr int kMaxNesting = 128;

Body parse_template(std::string_view source);

}  // namespace memfit::chat
