#include "parser.h"

#include <cerrno>
#include <cstdlib>
#include <initializer_list>

#include "builtins.h"
#include "lexer.h"

namespace memfit::chat {
namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Body parse() {
    Body body;
    const std::string end = parse_body(body, {}, Position{});
    if (!end.empty()) fail_at(cur().at, "'" + end + "' without an opening tag");
    return body;
  }

 private:
  // ---- token stream ----
  const Token& cur() const { return tokens_[pos_]; }
  const Token& peek(std::size_t ahead = 1) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  void advance() {
    if (pos_ + 1 < tokens_.size()) ++pos_;
  }
  bool is_op(const char* op) const { return cur().kind == TokenKind::kOperator && cur().text == op; }
  bool is_name(const char* name) const { return cur().kind == TokenKind::kName && cur().text == name; }
  bool accept_op(const char* op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool accept_name(const char* name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case TokenKind::kName:
      case TokenKind::kOperator: return "'" + t.text + "'";
      case TokenKind::kString: return "a string";
      case TokenKind::kText: return "template text";
      default: return token_kind_name(t.kind);
    }
  }

  [[noreturn]] void fail_at(Position at, const std::string& message) const {
    throw TemplateError(ErrorCode::kTemplateSyntax, at_position(at) + message);
  }
  [[noreturn]] void expected(const std::string& what) const {
    fail_at(cur().at, "expected " + what + ", got " + describe(cur()));
  }
  void expect_op(const char* op) {
    if (!accept_op(op)) expected(std::string("'") + op + "'");
  }
  std::string expect_name() {
    if (cur().kind != TokenKind::kName) expected("a name");
    std::string name = cur().text;
    advance();
    return name;
  }
  void expect_block_end() {
    if (cur().kind != TokenKind::kBlockEnd) expected("'%}'");
    advance();
  }

  struct DepthGuard {
    Parser& p;
    DepthGuard(Parser& parser, Position at) : p(parser) {
      if (++p.depth_ > kMaxNesting)
        throw TemplateError(ErrorCode::kTemplateLimit,
                            at_position(at) + "nesting deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    ~DepthGuard() { --p.depth_; }
  };

  // ---- statements ----
  // Parses until a block tag whose name is in `ends` (consumed: the `{%` and the name) and
  // returns that name, or "" at the end of the template (an error when ends is not empty).
  std::string parse_body(Body& body, const std::vector<std::string>& ends, Position opened) {
    DepthGuard guard(*this, opened);
    for (;;) {
      const Token& t = cur();
      switch (t.kind) {
        case TokenKind::kEnd:
          if (!ends.empty())
            fail_at(t.at, "expected '" + ends.back() + "' to close the tag at line " +
                              std::to_string(opened.line) + ", column " + std::to_string(opened.column) +
                              ", got the end of the template");
          return {};
        case TokenKind::kText: {
          auto s = make_stmt(Stmt::Kind::kText, t.at);
          s->text = t.text;
          body.push_back(std::move(s));
          advance();
          break;
        }
        case TokenKind::kVariableBegin: {
          auto s = make_stmt(Stmt::Kind::kOutput, t.at);
          advance();
          s->exprs.push_back(parse_tuple(true));
          if (cur().kind != TokenKind::kVariableEnd) expected("'}}'");
          advance();
          body.push_back(std::move(s));
          break;
        }
        case TokenKind::kBlockBegin: {
          advance();
          if (cur().kind != TokenKind::kName) expected("a statement name");
          const std::string name = cur().text;
          for (const std::string& end : ends)
            if (name == end) {
              advance();
              return name;
            }
          body.push_back(parse_statement());
          break;
        }
        default: expected("template text, '{{' or '{%'");
      }
    }
  }

  static std::unique_ptr<Stmt> make_stmt(Stmt::Kind kind, Position at) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->at = at;
    return s;
  }

  std::unique_ptr<Stmt> parse_statement() {
    const Token name = cur();
    advance();
    if (name.text == "if") return parse_if(name.at);
    if (name.text == "for") return parse_for(name.at);
    if (name.text == "set") return parse_set(name.at);
    if (name.text == "macro") return parse_macro(name.at);
    if (name.text == "break" || name.text == "continue") {
      auto s = make_stmt(name.text == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue, name.at);
      expect_block_end();
      return s;
    }
    if (name.text == "generation") {
      auto s = make_stmt(Stmt::Kind::kGeneration, name.at);
      expect_block_end();
      s->bodies.emplace_back();
      parse_body(s->bodies.back(), {"endgeneration"}, name.at);
      expect_block_end();
      return s;
    }
    if (name.text.rfind("end", 0) == 0 || name.text == "elif" || name.text == "else")
      fail_at(name.at, "'" + name.text + "' without a matching opening tag");
    static const char* const kKnownUnsupported[] = {"raw", "filter", "call", "include", "import", "from",
                                                    "extends", "block", "with", "do", "autoescape", "trans"};
    for (const char* tag : kKnownUnsupported)
      if (name.text == tag)
        fail_at(name.at, "the '" + name.text + "' tag is not supported in memfit's chat templates "
                         "(docs/chat-templates.md lists what is)");
    fail_at(name.at, "unknown tag '" + name.text + "' (expected if, for, set, macro, break, continue or generation)");
  }

  std::unique_ptr<Stmt> parse_if(Position at) {
    auto s = make_stmt(Stmt::Kind::kIf, at);
    s->exprs.push_back(parse_tuple(false));
    expect_block_end();
    for (;;) {
      s->bodies.emplace_back();
      const std::string end = parse_body(s->bodies.back(), {"elif", "else", "endif"}, at);
      if (end == "elif") {
        s->exprs.push_back(parse_tuple(false));
        expect_block_end();
      } else if (end == "else") {
        expect_block_end();
        s->bodies.emplace_back();
        parse_body(s->bodies.back(), {"endif"}, at);
        expect_block_end();
        return s;
      } else {
        expect_block_end();
        s->bodies.emplace_back();  // an empty else
        return s;
      }
    }
  }

  void parse_targets(Stmt& s) {
    const bool parenthesized = accept_op("(");
    s.names.push_back(expect_name());
    while (accept_op(",")) {
      if (cur().kind != TokenKind::kName) break;  // a trailing comma
      s.names.push_back(expect_name());
    }
    if (parenthesized) expect_op(")");
  }

  std::unique_ptr<Stmt> parse_for(Position at) {
    auto s = make_stmt(Stmt::Kind::kFor, at);
    parse_targets(*s);
    if (!accept_name("in")) expected("'in'");
    s->exprs.push_back(parse_tuple(false, /*stop_at_if=*/true));
    if (accept_name("if")) s->exprs.push_back(parse_expression(true));
    if (is_name("recursive")) fail_at(cur().at, "recursive for loops are not supported");
    expect_block_end();
    s->bodies.emplace_back();
    const std::string end = parse_body(s->bodies.back(), {"else", "endfor"}, at);
    s->bodies.emplace_back();
    if (end == "else") {
      expect_block_end();
      parse_body(s->bodies.back(), {"endfor"}, at);
    }
    expect_block_end();
    return s;
  }

  std::unique_ptr<Stmt> parse_set(Position at) {
    auto s = make_stmt(Stmt::Kind::kSet, at);
    s->names.push_back(expect_name());
    if (accept_op(".")) {
      s->attr = expect_name();
    } else {
      while (accept_op(",")) s->names.push_back(expect_name());
    }
    if (accept_op("=")) {
      s->exprs.push_back(parse_tuple(true));
      expect_block_end();
      return s;
    }
    if (!s->attr.empty() || s->names.size() != 1) expected("'='");
    if (cur().kind != TokenKind::kBlockEnd) expected("'=' or '%}'");
    advance();
    s->kind = Stmt::Kind::kSetBlock;
    s->bodies.emplace_back();
    parse_body(s->bodies.back(), {"endset"}, at);
    expect_block_end();
    return s;
  }

  std::unique_ptr<Stmt> parse_macro(Position at) {
    auto s = make_stmt(Stmt::Kind::kMacro, at);
    s->text = expect_name();
    expect_op("(");
    while (!accept_op(")")) {
      if (!s->names.empty()) expect_op(",");
      if (accept_op(")")) break;
      s->names.push_back(expect_name());
      s->exprs.push_back(accept_op("=") ? parse_expression(true) : nullptr);
    }
    expect_block_end();
    s->bodies.emplace_back();
    parse_body(s->bodies.back(), {"endmacro"}, at);
    if (cur().kind == TokenKind::kName) advance();  // {% endmacro name %}
    expect_block_end();
    return s;
  }

  // ---- expressions (Jinja's precedence, lowest first) ----
  ExprPtr make(Expr::Kind kind, Position at) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->at = at;
    return e;
  }

  // `a, b` without parentheses makes a tuple where Jinja allows one ({{ }}, set, for … in).
  ExprPtr parse_tuple(bool with_condition, bool stop_at_if = false) {
    const Position at = cur().at;
    ExprPtr first = parse_expression(with_condition && !stop_at_if);
    if (!is_op(",")) return first;
    auto tuple = make(Expr::Kind::kTuple, at);
    tuple->children.push_back(std::move(first));
    while (accept_op(",")) {
      if (cur().kind == TokenKind::kBlockEnd || cur().kind == TokenKind::kVariableEnd || is_name("if")) break;
      tuple->children.push_back(parse_expression(with_condition && !stop_at_if));
    }
    return tuple;
  }

  ExprPtr parse_expression(bool with_condition) {
    DepthGuard guard(*this, cur().at);
    ExprPtr expr = parse_or();
    if (!with_condition) return expr;
    while (is_name("if")) {
      const Position at = cur().at;
      advance();
      auto cond = make(Expr::Kind::kCondition, at);
      cond->children.push_back(parse_or());
      cond->children.push_back(std::move(expr));
      cond->children.push_back(accept_name("else") ? parse_expression(true) : nullptr);
      expr = std::move(cond);
    }
    return expr;
  }

  ExprPtr binary(const std::string& op, ExprPtr left, ExprPtr right, Position at) {
    auto e = make(Expr::Kind::kBinary, at);
    e->name = op;
    e->children.push_back(std::move(left));
    e->children.push_back(std::move(right));
    return e;
  }

  // One left-associative level: operands from `next`, joined by any of `ops` (operators, or
  // the keywords `or` / `and`).
  ExprPtr parse_level(std::initializer_list<const char*> ops, ExprPtr (Parser::*next)()) {
    ExprPtr left = (this->*next)();
    for (;;) {
      const char* matched = nullptr;
      for (const char* op : ops)
        if (is_op(op) || is_name(op)) matched = op;
      if (!matched) return left;
      const Position at = cur().at;
      advance();
      left = binary(matched, std::move(left), (this->*next)(), at);
    }
  }

  ExprPtr parse_or() { return parse_level({"or"}, &Parser::parse_and); }
  ExprPtr parse_and() { return parse_level({"and"}, &Parser::parse_not); }

  ExprPtr parse_not() {
    if (is_name("not")) {
      const Position at = cur().at;
      advance();
      DepthGuard guard(*this, at);
      auto e = make(Expr::Kind::kNot, at);
      e->children.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    const Position at = cur().at;
    ExprPtr first = parse_math1();
    ExprPtr chain;
    for (;;) {
      std::string op;
      if (cur().kind == TokenKind::kOperator &&
          (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == ">" ||
           cur().text == "<=" || cur().text == ">=")) {
        op = cur().text;
        advance();
      } else if (is_name("in")) {
        op = "in";
        advance();
      } else if (is_name("not") && peek().kind == TokenKind::kName && peek().text == "in") {
        op = "not in";
        advance();
        advance();
      } else {
        break;
      }
      if (!chain) {
        chain = make(Expr::Kind::kCompare, at);
        chain->children.push_back(std::move(first));
      }
      chain->ops.push_back(op);
      chain->children.push_back(parse_math1());
    }
    return chain ? std::move(chain) : std::move(first);
  }

  // Jinja's order: + - bind loosest, then ~, then * / // %, then **.
  ExprPtr parse_math1() { return parse_level({"+", "-"}, &Parser::parse_concat); }
  ExprPtr parse_concat() { return parse_level({"~"}, &Parser::parse_math2); }
  ExprPtr parse_math2() { return parse_level({"*", "/", "//", "%"}, &Parser::parse_pow); }
  ExprPtr parse_pow() { return parse_level({"**"}, &Parser::parse_filtered_unary); }
  ExprPtr parse_filtered_unary() { return parse_unary(true); }

  ExprPtr parse_unary(bool with_filter) {
    const Position at = cur().at;
    DepthGuard guard(*this, at);
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      auto e = make(is_op("-") ? Expr::Kind::kNegate : Expr::Kind::kPlus, at);
      advance();
      e->children.push_back(parse_unary(false));
      node = std::move(e);
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr literal(Value v, Position at) {
    auto e = make(Expr::Kind::kLiteral, at);
    e->literal = std::move(v);
    return e;
  }

  ExprPtr parse_primary() {
    const Token t = cur();
    switch (t.kind) {
      case TokenKind::kName: {
        advance();
        if (t.text == "true" || t.text == "True") return literal(Value(true), t.at);
        if (t.text == "false" || t.text == "False") return literal(Value(false), t.at);
        if (t.text == "none" || t.text == "None") return literal(Value::none(), t.at);
        auto e = make(Expr::Kind::kName, t.at);
        e->name = t.text;
        return e;
      }
      case TokenKind::kString: {
        std::string s;
        while (cur().kind == TokenKind::kString) {  // adjacent literals concatenate
          s += cur().text;
          advance();
        }
        return literal(Value(std::move(s)), t.at);
      }
      case TokenKind::kInteger: {
        advance();
        errno = 0;
        const long long v = std::strtoll(t.text.c_str(), nullptr, 10);
        if (errno == ERANGE) fail_at(t.at, "integer literal " + t.text + " does not fit in 64 bits");
        return literal(Value(static_cast<std::int64_t>(v)), t.at);
      }
      case TokenKind::kFloat:
        advance();
        return literal(Value(std::strtod(t.text.c_str(), nullptr)), t.at);
      case TokenKind::kOperator:
        if (t.text == "(") return parse_parenthesized();
        if (t.text == "[") return parse_list();
        if (t.text == "{") return parse_dict();
        [[fallthrough]];
      default: expected("an expression");
    }
  }

  ExprPtr parse_parenthesized() {
    const Position at = cur().at;
    advance();
    if (accept_op(")")) return make(Expr::Kind::kTuple, at);
    ExprPtr first = parse_expression(true);
    if (accept_op(")")) return first;
    auto tuple = make(Expr::Kind::kTuple, at);
    tuple->children.push_back(std::move(first));
    while (accept_op(",")) {
      if (is_op(")")) break;
      tuple->children.push_back(parse_expression(true));
    }
    expect_op(")");
    return tuple;
  }

  ExprPtr parse_list() {
    auto e = make(Expr::Kind::kList, cur().at);
    advance();
    while (!accept_op("]")) {
      if (!e->children.empty()) {
        expect_op(",");
        if (accept_op("]")) break;
      }
      e->children.push_back(parse_expression(true));
    }
    return e;
  }

  ExprPtr parse_dict() {
    auto e = make(Expr::Kind::kDict, cur().at);
    advance();
    while (!accept_op("}")) {
      if (!e->children.empty()) {
        expect_op(",");
        if (accept_op("}")) break;
      }
      e->children.push_back(parse_expression(true));
      expect_op(":");
      e->children.push_back(parse_expression(true));
    }
    return e;
  }

  // Lookups and calls are placed where their subject starts: an error in `x.y` or `f(…)` points
  // at x or f.
  ExprPtr parse_postfix(ExprPtr node) {
    for (;;) {
      const Position at = node->at;
      if (accept_op(".")) {
        if (cur().kind == TokenKind::kInteger) {  // x.0 is x[0]
          auto item = make(Expr::Kind::kItem, at);
          item->children.push_back(std::move(node));
          item->children.push_back(literal(Value(static_cast<std::int64_t>(std::strtoll(cur().text.c_str(), nullptr, 10))), cur().at));
          advance();
          node = std::move(item);
          continue;
        }
        auto attr = make(Expr::Kind::kAttr, at);
        attr->name = expect_name();
        attr->children.push_back(std::move(node));
        node = std::move(attr);
      } else if (is_op("[")) {
        advance();
        node = parse_subscript(std::move(node), at);
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr subject, Position at) {
    ExprPtr parts[3];
    int colons = 0;
    for (;;) {
      if (is_op("]")) break;
      if (accept_op(":")) {
        if (++colons > 2) expected("']'");
        continue;
      }
      if (parts[colons]) expected(colons < 2 ? "':' or ']'" : "']'");
      parts[colons] = parse_expression(true);
    }
    advance();  // ]
    if (colons == 0) {
      if (!parts[0]) fail_at(at, "empty subscript []");
      auto item = make(Expr::Kind::kItem, at);
      item->children.push_back(std::move(subject));
      item->children.push_back(std::move(parts[0]));
      return item;
    }
    auto slice = make(Expr::Kind::kSlice, at);
    slice->children.push_back(std::move(subject));
    for (auto& p : parts) slice->children.push_back(std::move(p));
    return slice;
  }

  // (args, name=value, …) into e->children / e->kwarg_names.
  void parse_call_args(Expr& e) {
    expect_op("(");
    bool first = true;
    while (!accept_op(")")) {
      if (!first) {
        expect_op(",");
        if (accept_op(")")) break;
      }
      first = false;
      if (cur().kind == TokenKind::kName && peek().kind == TokenKind::kOperator && peek().text == "=") {
        e.kwarg_names.push_back(cur().text);
        advance();
        advance();
        e.children.push_back(parse_expression(true));
      } else {
        if (!e.kwarg_names.empty()) fail_at(cur().at, "a positional argument after a keyword argument");
        if (is_op("*")) fail_at(cur().at, "*args and **kwargs in calls are not supported");
        e.children.push_back(parse_expression(true));
      }
    }
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto call = make(Expr::Kind::kCall, callee->at);
    call->children.push_back(std::move(callee));
    parse_call_args(*call);
    return call;
  }

  std::string dotted_name() {
    std::string name = expect_name();
    while (is_op(".") && peek().kind == TokenKind::kName) {
      advance();
      name += "." + expect_name();
    }
    return name;
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    for (;;) {
      const Position at = cur().at;
      if (accept_op("|")) {
        auto f = make(Expr::Kind::kFilter, at);
        f->name = dotted_name();
        if (!is_known_filter(f->name))
          fail_at(at, "no filter named '" + f->name + "' (docs/chat-templates.md lists the supported filters)");
        f->children.push_back(std::move(node));
        if (is_op("(")) parse_call_args(*f);
        node = std::move(f);
      } else if (is_name("is")) {
        advance();
        auto t = make(Expr::Kind::kTest, at);
        t->negated = accept_name("not");
        t->name = dotted_name();
        if (!is_known_test(t->name))
          fail_at(at, "no test named '" + t->name + "' (docs/chat-templates.md lists the supported tests)");
        t->children.push_back(std::move(node));
        if (is_op("(")) {
          parse_call_args(*t);
        } else if ((cur().kind == TokenKind::kName && cur().text != "else" && cur().text != "or" &&
                    cur().text != "and") ||
                   cur().kind == TokenKind::kString || cur().kind == TokenKind::kInteger ||
                   cur().kind == TokenKind::kFloat || is_op("[") || is_op("{")) {
          // One argument without parentheses: `x is divisibleby 3`, `x is equalto y`.
          if (is_name("is") || is_name("in") || is_name("if") || is_name("not")) {
            // a keyword, not an argument
          } else {
            t->children.push_back(parse_postfix(parse_primary()));
          }
        }
        node = std::move(t);
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Body parse_template(std::string_view source) { return Parser(tokenize(source)).parse(); }

}  // namespace memfit::chat
