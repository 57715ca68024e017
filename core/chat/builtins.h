// core/chat/builtins.h — what expressions compute with: Python's operators on Values, Jinja's
// attribute/item lookup, its filters and tests, the str/dict methods templates call, and the
// globals of transformers' environment (range, namespace, dict, raise_exception, strftime_now).
#pragma once

#include <string>
#include <vector>

#include "memfit/chat/chat_template.h"
#include "value.h"

namespace memfit::chat {

// ---- operators (operators.cpp) ----
Value binary_op(const std::string& op, const Value& a, const Value& b, const RenderLimits& limits);
bool compare_op(const std::string& op, const Value& a, const Value& b);
Value negate(const Value& v);
// Jinja's getattr: a str/dict method, a dict key or a namespace attribute; Undefined if none.
Value get_attr(const Value& subject, const std::string& name);
// Jinja's getitem: subject[key], falling back to a method for a string key; Undefined if none.
Value get_item(const Value& subject, const Value& key);
Value get_slice(const Value& subject, const Value& start, const Value& stop, const Value& step);
// What a for loop, |list or |join walks: a list's items, a dict's keys, a string's characters.
List iterate(const Value& v, const char* what);
std::int64_t to_int_index(const Value& v, const char* what);
// Raises the UndefinedError Jinja raises when an Undefined is used as a value.
[[noreturn]] void fail_undefined(const Value& v);

// ---- call arguments (filters, tests, methods, globals) ----
// The argument at `index` or named `name`; nullptr when given neither way.
const Value* argument(const CallArgs& args, std::size_t index, const char* name);
void check_arity(const CallArgs& args, std::size_t max_positional, const std::string& what);

// ---- filters (filters.cpp), tests (tests.cpp) ----
bool is_known_filter(const std::string& name);
Value apply_filter(const std::string& name, const Value& subject, CallArgs& args, const RenderLimits& limits);
bool is_known_test(const std::string& name);
bool apply_test(const std::string& name, const Value& subject, const CallArgs& args);

// ---- methods (methods.cpp): "abc".upper, d.items, …; Undefined when there is no such method ----
Value bound_method(const Value& subject, const std::string& name);

// ---- globals (globals.cpp); Undefined for another name ----
Value global_value(const std::string& name, const RenderLimits& limits);

}  // namespace memfit::chat
