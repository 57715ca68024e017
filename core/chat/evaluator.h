// core/chat/evaluator.h — walks a parsed template: statements write to the output, expressions
// compute Values. Scopes follow Jinja: each for-loop iteration and each macro call has its own
// frame (a `set` inside a loop does not outlive the iteration, hence namespace()), `if` has none.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ast.h"
#include "memfit/chat/chat_template.h"

namespace memfit::chat {

class Evaluator {
 public:
  Evaluator(const RenderLimits& limits, Dict context);
  // The template's output; errors carry "chat template line L, column C: ".
  std::string run(const Body& body);

 private:
  enum class Flow { kNormal, kBreak, kContinue };
  using Frame = std::vector<std::pair<std::string, Value>>;

  Flow exec(const Body& body);
  Flow exec(const Stmt& s);
  Flow exec_if(const Stmt& s);
  Flow exec_for(const Stmt& s);
  void exec_set(const Stmt& s);
  void define_macro(const Stmt& s);
  Value call_macro(const Stmt& s, CallArgs& args);
  std::string capture(const Body& body);

  Value eval(const Expr& e);
  Value eval_inner(const Expr& e);
  Value eval_call(const Expr& e);
  CallArgs eval_args(const Expr& e, std::size_t first);
  Value eval_compare(const Expr& e);

  Value lookup(const std::string& name) const;
  void assign(const std::string& name, Value v);
  void bind_targets(const std::vector<std::string>& names, const Value& v);
  void emit(const std::string& text);

  RenderLimits limits_;
  std::vector<Frame> frames_;
  std::string* out_ = nullptr;
  std::uint64_t iterations_ = 0;
  int call_depth_ = 0;
  Position at_;
};

}  // namespace memfit::chat
