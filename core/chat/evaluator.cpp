#include "evaluator.h"

#include "builtins.h"
#include "template_error.h"

namespace memfit::chat {

Evaluator::Evaluator(const RenderLimits& limits, Dict context) : limits_(limits) {
  frames_.emplace_back(std::move(context.entries));
}

std::string Evaluator::run(const Body& body) {
  std::string out;
  out_ = &out;
  try {
    exec(body);
  } catch (const TemplateError& e) {
    if (e.message().rfind("chat template line", 0) == 0) throw;
    throw TemplateError(e.code(), at_position(at_) + e.message());
  }
  return out;
}

void Evaluator::emit(const std::string& text) {
  if (out_->size() + text.size() > limits_.max_output_bytes)
    throw TemplateError(ErrorCode::kTemplateLimit, "the output is over the cap of " +
                                                       std::to_string(limits_.max_output_bytes) + " bytes");
  out_->append(text);
}

Value Evaluator::lookup(const std::string& name) const {
  for (auto frame = frames_.rbegin(); frame != frames_.rend(); ++frame)
    for (const auto& [k, v] : *frame)
      if (k == name) return v;
  Value global = global_value(name, limits_);
  return global.is_undefined() ? Value::undefined("'" + name + "' is undefined") : global;
}

void Evaluator::assign(const std::string& name, Value v) {
  for (auto& [k, old] : frames_.back())
    if (k == name) {
      old = std::move(v);
      return;
    }
  frames_.back().emplace_back(name, std::move(v));
}

void Evaluator::bind_targets(const std::vector<std::string>& names, const Value& v) {
  if (names.size() == 1) {
    assign(names[0], v);
    return;
  }
  const List items = iterate(v, "unpacking");
  if (items.size() != names.size())
    fail_render("cannot unpack " + std::to_string(items.size()) + " values into " + std::to_string(names.size()) + " names");
  for (std::size_t i = 0; i < names.size(); ++i) assign(names[i], items[i]);
}

std::string Evaluator::capture(const Body& body) {
  std::string buffer;
  std::string* saved = out_;
  out_ = &buffer;
  try {
    exec(body);
  } catch (...) {
    out_ = saved;
    throw;
  }
  out_ = saved;
  return buffer;
}

// ---- statements ----

Evaluator::Flow Evaluator::exec(const Body& body) {
  for (const auto& s : body) {
    const Flow flow = exec(*s);
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Evaluator::Flow Evaluator::exec(const Stmt& s) {
  at_ = s.at;
  switch (s.kind) {
    case Stmt::Kind::kText: emit(s.text); break;
    case Stmt::Kind::kOutput: emit(eval(*s.exprs[0]).str()); break;
    case Stmt::Kind::kIf: return exec_if(s);
    case Stmt::Kind::kFor: return exec_for(s);
    case Stmt::Kind::kSet: exec_set(s); break;
    case Stmt::Kind::kSetBlock: assign(s.names[0], Value(capture(s.bodies[0]))); break;
    case Stmt::Kind::kMacro: define_macro(s); break;
    case Stmt::Kind::kBreak: return Flow::kBreak;
    case Stmt::Kind::kContinue: return Flow::kContinue;
    case Stmt::Kind::kGeneration: return exec(s.bodies[0]);
  }
  return Flow::kNormal;
}

Evaluator::Flow Evaluator::exec_if(const Stmt& s) {
  for (std::size_t i = 0; i < s.exprs.size(); ++i)
    if (eval(*s.exprs[i]).truthy()) return exec(s.bodies[i]);
  return exec(s.bodies.back());
}

Evaluator::Flow Evaluator::exec_for(const Stmt& s) {
  const Value iterable = eval(*s.exprs[0]);
  if (iterable.is_none()) fail_render("'NoneType' object is not iterable");
  List items = iterate(iterable, "for loop");
  if (s.exprs.size() > 1) {  // {% for x in xs if cond %}: the loop sees only the items that pass
    List kept;
    for (const Value& item : items) {
      frames_.emplace_back();
      bind_targets(s.names, item);
      const bool keep = eval(*s.exprs[1]).truthy();
      frames_.pop_back();
      if (keep) kept.push_back(item);
    }
    items = std::move(kept);
  }
  const auto n = static_cast<std::int64_t>(items.size());
  for (std::int64_t i = 0; i < n; ++i) {
    if (++iterations_ > limits_.max_loop_iterations)
      throw TemplateError(ErrorCode::kTemplateLimit, "more than " + std::to_string(limits_.max_loop_iterations) +
                                                         " loop iterations");
    Dict loop;
    loop.set("index", Value(i + 1));
    loop.set("index0", Value(i));
    loop.set("revindex", Value(n - i));
    loop.set("revindex0", Value(n - i - 1));
    loop.set("first", Value(i == 0));
    loop.set("last", Value(i == n - 1));
    loop.set("length", Value(n));
    loop.set("depth", Value(1));
    loop.set("depth0", Value(0));
    loop.set("previtem", i > 0 ? items[static_cast<std::size_t>(i - 1)] : Value::undefined("there is no previous item"));
    loop.set("nextitem", i + 1 < n ? items[static_cast<std::size_t>(i + 1)] : Value::undefined("there is no next item"));
    loop.set("cycle", Value::function("loop.cycle", [i](CallArgs& args) {
               if (args.positional.empty()) fail_render("no items for cycling given");
               return args.positional[static_cast<std::size_t>(i) % args.positional.size()];
             }));
    frames_.emplace_back();
    assign("loop", Value(std::move(loop)));
    bind_targets(s.names, items[static_cast<std::size_t>(i)]);
    Flow flow;
    try {
      flow = exec(s.bodies[0]);
    } catch (...) {
      frames_.pop_back();
      throw;
    }
    frames_.pop_back();
    if (flow == Flow::kBreak) break;
  }
  if (n == 0) return exec(s.bodies[1]);
  return Flow::kNormal;
}

void Evaluator::exec_set(const Stmt& s) {
  Value v = eval(*s.exprs[0]);
  if (s.attr.empty()) {
    bind_targets(s.names, v);
    return;
  }
  const Value target = lookup(s.names[0]);
  if (target.kind() != Value::Kind::kNamespace)
    fail_render("cannot assign attribute '" + s.attr + "' on '" + s.names[0] + "', which is not a namespace()");
  target.namespace_attributes().set(s.attr, std::move(v));
}

void Evaluator::define_macro(const Stmt& s) {
  assign(s.text, Value::function(s.text, [this, &s](CallArgs& args) { return call_macro(s, args); }));
}

Value Evaluator::call_macro(const Stmt& s, CallArgs& args) {
  if (args.positional.size() > s.names.size())
    fail_render("macro '" + s.text + "' takes not more than " + std::to_string(s.names.size()) + " argument(s)");
  if (++call_depth_ > limits_.max_call_depth) {
    --call_depth_;
    throw TemplateError(ErrorCode::kTemplateLimit, "macro calls nested deeper than " + std::to_string(limits_.max_call_depth));
  }
  // A macro sees the template's top-level names and its own arguments, not its caller's locals.
  std::vector<Frame> saved = std::move(frames_);
  frames_.clear();
  frames_.push_back(saved.front());
  frames_.emplace_back();
  std::string result;
  try {
    for (const auto& [k, v] : args.named) {
      bool known = false;
      for (const std::string& p : s.names) known = known || p == k;
      if (!known) fail_render("macro '" + s.text + "' takes no keyword argument '" + k + "'");
    }
    for (std::size_t i = 0; i < s.names.size(); ++i) {
      const Value* given = argument(args, i, s.names[i].c_str());
      assign(s.names[i], given ? *given : s.exprs[i] ? eval(*s.exprs[i])
                                                     : Value::undefined("macro argument '" + s.names[i] + "' was not given"));
    }
    result = capture(s.bodies[0]);
  } catch (...) {
    saved.front() = std::move(frames_.front());
    frames_ = std::move(saved);
    --call_depth_;
    throw;
  }
  saved.front() = std::move(frames_.front());
  frames_ = std::move(saved);
  --call_depth_;
  return Value(std::move(result));
}

// ---- expressions ----

Value Evaluator::eval(const Expr& e) {
  const Position saved = at_;
  at_ = e.at;  // left in place on an error: the innermost expression that failed
  Value v = eval_inner(e);
  at_ = saved;
  return v;
}

CallArgs Evaluator::eval_args(const Expr& e, std::size_t first) {
  CallArgs args;
  const std::size_t named_from = e.children.size() - e.kwarg_names.size();
  for (std::size_t i = first; i < named_from; ++i) args.positional.push_back(eval(*e.children[i]));
  for (std::size_t i = named_from; i < e.children.size(); ++i)
    args.named.emplace_back(e.kwarg_names[i - named_from], eval(*e.children[i]));
  return args;
}

Value Evaluator::eval_call(const Expr& e) {
  const Value callee = eval(*e.children[0]);
  CallArgs args = eval_args(e, 1);
  if (callee.kind() != Value::Kind::kFunction) {
    if (callee.is_undefined()) fail_undefined(callee);
    fail_render("'" + callee.type_name() + "' is not callable");
  }
  return callee.as_function()(args);
}

Value Evaluator::eval_compare(const Expr& e) {
  Value left = eval(*e.children[0]);
  for (std::size_t i = 0; i < e.ops.size(); ++i) {
    Value right = eval(*e.children[i + 1]);
    if (!compare_op(e.ops[i], left, right)) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

Value Evaluator::eval_inner(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kLiteral: return e.literal;
    case Expr::Kind::kName: return lookup(e.name);
    case Expr::Kind::kList:
    case Expr::Kind::kTuple: {
      List items;
      for (const auto& c : e.children) items.push_back(eval(*c));
      return e.kind == Expr::Kind::kTuple ? Value::tuple(std::move(items)) : Value(std::move(items));
    }
    case Expr::Kind::kDict: {
      Dict d;
      for (std::size_t i = 0; i + 1 < e.children.size(); i += 2) {
        const Value key = eval(*e.children[i]);
        if (!key.is_string()) fail_render("dict keys must be strings in memfit's templates, got " + key.type_name());
        d.set(key.as_string(), eval(*e.children[i + 1]));
      }
      return Value(std::move(d));
    }
    case Expr::Kind::kAttr: return get_attr(eval(*e.children[0]), e.name);
    case Expr::Kind::kItem: {
      const Value subject = eval(*e.children[0]);
      return get_item(subject, eval(*e.children[1]));
    }
    case Expr::Kind::kSlice: {
      const Value subject = eval(*e.children[0]);
      Value parts[3];
      for (int i = 0; i < 3; ++i)
        if (e.children[static_cast<std::size_t>(i) + 1]) parts[i] = eval(*e.children[static_cast<std::size_t>(i) + 1]);
      return get_slice(subject, parts[0], parts[1], parts[2]);
    }
    case Expr::Kind::kCall: return eval_call(e);
    case Expr::Kind::kFilter: {
      const Value subject = eval(*e.children[0]);
      CallArgs args = eval_args(e, 1);
      return apply_filter(e.name, subject, args, limits_);
    }
    case Expr::Kind::kTest: {
      const Value subject = eval(*e.children[0]);
      const CallArgs args = eval_args(e, 1);
      return Value(apply_test(e.name, subject, args) != e.negated);
    }
    case Expr::Kind::kNot: return Value(!eval(*e.children[0]).truthy());
    case Expr::Kind::kNegate: return negate(eval(*e.children[0]));
    case Expr::Kind::kPlus: {
      Value v = eval(*e.children[0]);
      if (!v.is_number()) negate(v);  // the same TypeError / UndefinedError as unary minus
      return v.kind() == Value::Kind::kBool ? Value(v.as_int()) : v;
    }
    case Expr::Kind::kBinary: {
      Value left = eval(*e.children[0]);
      if (e.name == "and") return left.truthy() ? eval(*e.children[1]) : left;
      if (e.name == "or") return left.truthy() ? left : eval(*e.children[1]);
      return binary_op(e.name, left, eval(*e.children[1]), limits_);
    }
    case Expr::Kind::kCompare: return eval_compare(e);
    case Expr::Kind::kCondition:
      if (eval(*e.children[0]).truthy()) return eval(*e.children[1]);
      return e.children[2] ? eval(*e.children[2]) : Value::undefined("the condition was false and there is no else");
  }
  return Value::undefined();
}

}  // namespace memfit::chat
