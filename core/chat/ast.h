// core/chat/ast.h — a parsed chat template: statements (text, {{ output }}, if, for, set, macro,
// break/continue, generation) holding expressions. Plain structs with a kind, owned by unique_ptr;
// the parser builds them, the evaluator walks them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "template_error.h"
#include "value.h"

namespace memfit::chat {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    kLiteral,   // literal
    kName,      // name
    kList,      // children
    kTuple,     // children (a Python tuple; evaluated as a list)
    kDict,      // children: key, value, key, value, …
    kAttr,      // children[0].name
    kItem,      // children[0][children[1]]
    kSlice,     // children[0][children[1]:children[2]:children[3]] (null where omitted)
    kCall,      // children[0](children[1..]); the last kwarg_names.size() are keyword arguments
    kFilter,    // children[0] | name(children[1..])
    kTest,      // children[0] is [not] name children[1..]
    kNot,       // not children[0]
    kNegate,    // -children[0]
    kPlus,      // +children[0]
    kBinary,    // children[0] name children[1]: or and + - * / // % ** ~
    kCompare,   // children[0] ops[0] children[1] ops[1] children[2] … (== != < > <= >= in, not in)
    kCondition, // children[1] if children[0] else children[2] (children[2] null: no else)
  };
  Kind kind;
  Position at;
  std::string name;
  Value literal;
  std::vector<ExprPtr> children;
  std::vector<std::string> kwarg_names;
  std::vector<std::string> ops;
  bool negated = false;
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct Stmt {
  enum class Kind {
    kText,        // text
    kOutput,      // exprs[0]
    kIf,          // exprs[i] guards bodies[i]; one more body than exprs: the else
    kFor,         // names in exprs[0] [if exprs[1]]: bodies[0], else bodies[1]
    kSet,         // names (one, or a tuple) [.attr] = exprs[0]
    kSetBlock,    // names[0] = the output of bodies[0]
    kMacro,       // text(names…) with exprs[i] the default of names[i] (null: none): bodies[0]
    kBreak,
    kContinue,
    kGeneration,  // transformers' {% generation %}: renders its body as is
  };
  Kind kind;
  Position at;
  std::string text;
  std::string attr;
  std::vector<std::string> names;
  std::vector<ExprPtr> exprs;
  std::vector<Body> bodies;
};

}  // namespace memfit::chat
