// Jinja's tests (`x is defined`, `x is not none`, `x is equalto 3`), with Jinja 3.1's semantics:
// `number` includes booleans, `integer` does not, strings are iterable sequences.
#include <map>

#include "builtins.h"
#include "template_error.h"
#include "text.h"

namespace memfit::chat {
namespace {

using K = Value::Kind;
using TestFn = bool (*)(const Value&, const CallArgs&);

const Value& other(const CallArgs& args, const char* test) {
  const Value* v = argument(args, 0, "other");
  if (!v) fail_render("the '" + std::string(test) + "' test needs an argument");
  return *v;
}

bool t_defined(const Value& v, const CallArgs&) { return !v.is_undefined(); }
bool t_undefined(const Value& v, const CallArgs&) { return v.is_undefined(); }
bool t_none(const Value& v, const CallArgs&) { return v.is_none(); }
bool t_boolean(const Value& v, const CallArgs&) { return v.kind() == K::kBool; }
bool t_true(const Value& v, const CallArgs&) { return v.kind() == K::kBool && v.as_bool(); }
bool t_false(const Value& v, const CallArgs&) { return v.kind() == K::kBool && !v.as_bool(); }
bool t_integer(const Value& v, const CallArgs&) { return v.kind() == K::kInt; }
bool t_float(const Value& v, const CallArgs&) { return v.kind() == K::kFloat; }
bool t_number(const Value& v, const CallArgs&) { return v.is_number(); }
bool t_string(const Value& v, const CallArgs&) { return v.is_string(); }
bool t_mapping(const Value& v, const CallArgs&) { return v.kind() == K::kDict; }
bool t_iterable(const Value& v, const CallArgs&) {
  return v.is_string() || v.is_list() || v.kind() == K::kDict || v.is_undefined();
}
bool t_sequence(const Value& v, const CallArgs&) { return v.is_string() || v.is_list() || v.kind() == K::kDict; }
bool t_callable(const Value& v, const CallArgs&) { return v.kind() == K::kFunction; }
bool t_sameas(const Value& v, const CallArgs& a) {
  const Value& o = other(a, "sameas");
  if (v.kind() != o.kind()) return false;
  // Python's `is`: None/True/False are singletons, small values compare by identity in practice.
  return v.is_none() || v.is_undefined() || values_equal(v, o);
}
bool t_eq(const Value& v, const CallArgs& a) { return values_equal(v, other(a, "eq")); }
bool t_ne(const Value& v, const CallArgs& a) { return !values_equal(v, other(a, "ne")); }
bool t_lt(const Value& v, const CallArgs& a) { return compare_op("<", v, other(a, "lt")); }
bool t_le(const Value& v, const CallArgs& a) { return compare_op("<=", v, other(a, "le")); }
bool t_gt(const Value& v, const CallArgs& a) { return compare_op(">", v, other(a, "gt")); }
bool t_ge(const Value& v, const CallArgs& a) { return compare_op(">=", v, other(a, "ge")); }
bool t_in(const Value& v, const CallArgs& a) { return compare_op("in", v, other(a, "in")); }
bool t_odd(const Value& v, const CallArgs&) { return to_int_index(v, "the 'odd' test's value") % 2 != 0; }
bool t_even(const Value& v, const CallArgs&) { return to_int_index(v, "the 'even' test's value") % 2 == 0; }
bool t_divisibleby(const Value& v, const CallArgs& a) {
  const std::int64_t d = to_int_index(other(a, "divisibleby"), "divisibleby's argument");
  if (d == 0) fail_render("divisibleby 0");
  return to_int_index(v, "the 'divisibleby' test's value") % d == 0;
}
bool t_lower(const Value& v, const CallArgs&) { return v.is_string() && text::lower(v.as_string()) == v.as_string(); }
bool t_upper(const Value& v, const CallArgs&) { return v.is_string() && text::upper(v.as_string()) == v.as_string(); }

const std::map<std::string, TestFn>& tests() {
  static const std::map<std::string, TestFn> table = {
      {"defined", t_defined}, {"undefined", t_undefined}, {"none", t_none},     {"boolean", t_boolean},
      {"true", t_true},       {"false", t_false},         {"integer", t_integer}, {"float", t_float},
      {"number", t_number},   {"string", t_string},       {"mapping", t_mapping}, {"iterable", t_iterable},
      {"sequence", t_sequence}, {"callable", t_callable}, {"sameas", t_sameas}, {"eq", t_eq},
      {"equalto", t_eq},      {"==", t_eq},               {"ne", t_ne},         {"!=", t_ne},
      {"lt", t_lt},           {"lessthan", t_lt},         {"<", t_lt},          {"le", t_le},
      {"<=", t_le},           {"gt", t_gt},               {"greaterthan", t_gt}, {">", t_gt},
      {"ge", t_ge},           {">=", t_ge},               {"in", t_in},         {"odd", t_odd},
      {"even", t_even},       {"divisibleby", t_divisibleby}, {"lower", t_lower}, {"upper", t_upper},
  };
  return table;
}

}  // namespace

bool is_known_test(const std::string& name) { return tests().count(name) != 0; }

bool apply_test(const std::string& name, const Value& subject, const CallArgs& args) {
  const auto it = tests().find(name);
  if (it == tests().end()) fail_render("no test named '" + name + "'");
  return it->second(subject, args);
}

}  // namespace memfit::chat
