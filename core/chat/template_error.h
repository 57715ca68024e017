// core/chat/template_error.h — chat-template failures are memfit::Error (code kTemplateSyntax,
// kTemplateRender or kTemplateLimit); the parser and the evaluator prefix the template position.
#pragma once

#include <string>

#include "memfit/error.h"

namespace memfit::chat {

using TemplateError = memfit::Error;

struct Position {
  int line = 1, column = 1;
};

// "chat template line 3, column 7: " — every message names where in the template it arose.
inline std::string at_position(Position p) {
  return "chat template line " + std::to_string(p.line) + ", column " + std::to_string(p.column) + ": ";
}

[[noreturn]] inline void fail_render(const std::string& message) {
  throw TemplateError(ErrorCode::kTemplateRender, message);
}

}  // namespace memfit::chat
