// core/chat/value.h — the values a chat template computes with: Python's None/bool/int/float/str/
// list/dict as Jinja sees them, plus Jinja's Undefined, namespace() objects and callables
// (macros, bound string/dict methods, globals). Lists and dicts are shared and immutable once
// built (transformers renders in an ImmutableSandboxedEnvironment: list.append, dict.update are
// refused); only a namespace's attributes may change, through `{% set ns.attr = … %}`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace memfit::chat {

class Value;
using List = std::vector<Value>;

// An insertion-ordered dict with string keys (Python dicts keep insertion order, and `tojson`
// and `items()` show it).
struct Dict {
  std::vector<std::pair<std::string, Value>> entries;
  const Value* find(std::string_view key) const;
  void set(const std::string& key, Value value);
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> named;
};
using Function = std::function<Value(CallArgs&)>;

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kNamespace, kFunction };

  Value() = default;  // Undefined
  static Value undefined(std::string hint = {});
  static Value none();
  Value(bool b);                 // NOLINT(google-explicit-constructor)
  Value(int i) : Value(static_cast<std::int64_t>(i)) {}  // NOLINT
  Value(std::int64_t i);         // NOLINT
  Value(double d);               // NOLINT
  Value(std::string s);          // NOLINT
  Value(const char* s) : Value(std::string(s)) {}  // NOLINT
  Value(List list);              // NOLINT
  Value(Dict dict);              // NOLINT
  // A Python tuple: a list that prints as (a, b) — what (a, b) literals and items() make.
  static Value tuple(List items);
  static Value namespace_of(Dict attributes);
  static Value function(std::string name, Function fn);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_tuple() const { return kind_ == Kind::kList && b_; }
  bool is_mapping() const { return kind_ == Kind::kDict || kind_ == Kind::kNamespace; }

  bool as_bool() const { return b_; }
  std::int64_t as_int() const { return kind_ == Kind::kBool ? (b_ ? 1 : 0) : i_; }
  double as_double() const { return kind_ == Kind::kFloat ? d_ : static_cast<double>(as_int()); }
  const std::string& as_string() const { return *s_; }
  const List& as_list() const { return *list_; }
  const Dict& as_dict() const { return *dict_; }
  Dict& namespace_attributes() const { return *dict_; }  // the one mutable container
  const Function& as_function() const { return *fn_; }
  const std::string& name() const { return *s_; }  // an Undefined's hint, a function's name

  // Python's truth value (Undefined and None are false, so are 0, "", [] and {}).
  bool truthy() const;
  // What `{{ value }}` prints: Python's str() (None → "None", [1, 'a'] → "[1, 'a']"), "" for
  // Undefined.
  std::string str() const;
  // Python's repr(): strings quoted as Python quotes them.
  std::string repr() const;
  // Jinja's type names in messages ("dict object", "str object", …).
  std::string type_name() const;

 private:
  Kind kind_ = Kind::kUndefined;
  bool b_ = false;
  std::int64_t i_ = 0;
  double d_ = 0;
  std::shared_ptr<const std::string> s_;
  std::shared_ptr<const List> list_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<const Function> fn_;
};

// Python's ==: 1 == 1.0 == True, lists and dicts compared deeply, Undefined == Undefined.
bool values_equal(const Value& a, const Value& b);

// Python's repr() of a float: the shortest text that reads back the same (0.1, 1e+20, 2.0).
std::string python_float_repr(double d);

// JSON in (messages, tools, extra context; key order kept), JSON out as transformers' `tojson`
// filter writes it: json.dumps(x, ensure_ascii, indent, separators, sort_keys).
Value from_json(const nlohmann::ordered_json& json);
struct JsonStyle {
  bool ensure_ascii = false;
  int indent = -1;                      // < 0: None (one line)
  std::string indent_text;              // an indent given as a string
  std::string item_separator = ", ", key_separator = ": ";
  bool sort_keys = false;
};
std::string to_json_text(const Value& value, const JsonStyle& style);

}  // namespace memfit::chat
