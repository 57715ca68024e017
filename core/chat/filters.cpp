// Jinja's filters that chat templates use, with Jinja 3.1's semantics; `tojson` is transformers'
// override (json.dumps with ensure_ascii, indent, separators, sort_keys; no HTML escaping).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

#include "builtins.h"
#include "template_error.h"
#include "text.h"

namespace memfit::chat {
namespace {

using K = Value::Kind;
using FilterFn = Value (*)(const Value&, CallArgs&, const RenderLimits&);

Value arg_or(const CallArgs& args, std::size_t i, const char* name, const Value& fallback) {
  const Value* v = argument(args, i, name);
  return v ? *v : fallback;
}

std::string string_arg(const CallArgs& args, std::size_t i, const char* name, const std::string& fallback) {
  const Value* v = argument(args, i, name);
  return v ? v->str() : fallback;
}

// "a.b.0" walks item by item, as Jinja's make_attrgetter does.
Value attribute_path(const Value& item, const std::string& path) {
  static const std::string kDot = ".";
  Value v = item;
  for (const std::string& part : text::split(path, &kDot, -1)) {
    const bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    v = numeric ? get_item(v, Value(static_cast<std::int64_t>(std::strtoll(part.c_str(), nullptr, 10))))
                : get_item(v, Value(part));
  }
  return v;
}

Value f_default(const Value& v, CallArgs& args, const RenderLimits&) {
  const bool boolean = arg_or(args, 1, "boolean", Value(false)).truthy();
  if (v.is_undefined() || (boolean && !v.truthy())) return arg_or(args, 0, "default_value", Value(std::string()));
  return v;
}

Value f_length(const Value& v, CallArgs&, const RenderLimits&) {
  switch (v.kind()) {
    case K::kUndefined: return Value(0);
    case K::kString: return Value(static_cast<std::int64_t>(text::length(v.as_string())));
    case K::kList: return Value(static_cast<std::int64_t>(v.as_list().size()));
    case K::kDict:
    case K::kNamespace: return Value(static_cast<std::int64_t>(v.as_dict().entries.size()));
    default: fail_render("object of type '" + v.type_name() + "' has no len()");
  }
}

Value f_first(const Value& v, CallArgs&, const RenderLimits&) {
  const List items = iterate(v, "first");
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value f_last(const Value& v, CallArgs&, const RenderLimits&) {
  const List items = iterate(v, "last");
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value f_join(const Value& v, CallArgs& args, const RenderLimits& limits) {
  const std::string sep = string_arg(args, 0, "d", "");
  const Value* attribute = argument(args, 1, "attribute");
  std::string out;
  bool first = true;
  for (const Value& item : iterate(v, "join")) {
    if (!first) out += sep;
    first = false;
    out += (attribute ? attribute_path(item, attribute->str()) : item).str();
    if (out.size() > limits.max_output_bytes)
      throw TemplateError(ErrorCode::kTemplateLimit, "join: the result is over the output cap");
  }
  return Value(std::move(out));
}

Value f_upper(const Value& v, CallArgs&, const RenderLimits&) { return Value(text::upper(v.str())); }
Value f_lower(const Value& v, CallArgs&, const RenderLimits&) { return Value(text::lower(v.str())); }
Value f_capitalize(const Value& v, CallArgs&, const RenderLimits&) { return Value(text::capitalize(v.str())); }
Value f_title(const Value& v, CallArgs&, const RenderLimits&) { return Value(text::jinja_title(v.str())); }

Value f_trim(const Value& v, CallArgs& args, const RenderLimits&) {
  const Value* chars = argument(args, 0, "chars");
  const std::string set = chars && !chars->is_none() ? chars->str() : std::string();
  return Value(text::strip(v.str(), text::Side::kBoth, chars && !chars->is_none() ? &set : nullptr));
}

Value f_replace(const Value& v, CallArgs& args, const RenderLimits& limits) {
  const Value* count = argument(args, 2, "count");
  std::string out = text::replace(v.str(), string_arg(args, 0, "old", ""), string_arg(args, 1, "new", ""),
                                  count && !count->is_none() ? static_cast<long>(to_int_index(*count, "replace count")) : -1);
  if (out.size() > limits.max_output_bytes)
    throw TemplateError(ErrorCode::kTemplateLimit, "replace: the result is over the output cap");
  return Value(std::move(out));
}

Value f_tojson(const Value& v, CallArgs& args, const RenderLimits&) {
  JsonStyle style;
  style.ensure_ascii = arg_or(args, 0, "ensure_ascii", Value(false)).truthy();
  const Value indent = arg_or(args, 1, "indent", Value::none());
  if (indent.is_string()) style.indent_text = indent.as_string();
  else if (!indent.is_none()) style.indent = static_cast<int>(std::max<std::int64_t>(0, to_int_index(indent, "tojson indent")));
  const bool pretty = !indent.is_none();
  const Value separators = arg_or(args, 2, "separators", Value::none());
  if (separators.is_list() && separators.as_list().size() == 2) {
    style.item_separator = separators.as_list()[0].str();
    style.key_separator = separators.as_list()[1].str();
  } else if (!separators.is_none()) {
    fail_render("tojson: separators must be a pair of strings");
  } else if (pretty) {
    style.item_separator = ",";
  }
  style.sort_keys = arg_or(args, 3, "sort_keys", Value(false)).truthy();
  if (pretty && style.indent < 0 && style.indent_text.empty()) style.indent = 0;
  return Value(to_json_text(v, style));
}

Value f_string(const Value& v, CallArgs&, const RenderLimits&) { return Value(v.str()); }

Value f_int(const Value& v, CallArgs& args, const RenderLimits&) {
  const Value fallback = arg_or(args, 0, "default", Value(0));
  if (v.kind() == K::kInt || v.kind() == K::kBool) return Value(v.as_int());
  if (v.kind() == K::kFloat) return std::isfinite(v.as_double()) ? Value(static_cast<std::int64_t>(v.as_double())) : fallback;
  if (v.is_undefined()) fail_undefined(v);
  if (!v.is_string()) return fallback;
  std::string s = text::strip(v.as_string(), text::Side::kBoth);
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  const int base = static_cast<int>(to_int_index(arg_or(args, 1, "base", Value(10)), "int base"));
  errno = 0;
  char* end = nullptr;
  const long long i = std::strtoll(s.c_str(), &end, base);
  if (!s.empty() && end && *end == '\0' && errno == 0) return Value(static_cast<std::int64_t>(i));
  const double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && end && *end == '\0' && std::isfinite(d)) return Value(static_cast<std::int64_t>(d));
  return fallback;
}

Value f_float(const Value& v, CallArgs& args, const RenderLimits&) {
  if (v.is_number()) return Value(v.as_double());
  if (v.is_string()) {
    const std::string s = text::strip(v.as_string(), text::Side::kBoth);
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end && *end == '\0') return Value(d);
  }
  if (v.is_undefined()) fail_undefined(v);
  return arg_or(args, 0, "default", Value(0.0));
}

Value f_list(const Value& v, CallArgs&, const RenderLimits&) { return Value(iterate(v, "list")); }

Value f_items(const Value& v, CallArgs&, const RenderLimits&) {
  if (v.is_undefined()) return Value(List{});
  if (!v.is_mapping()) fail_render("items: can only get item pairs from a mapping, not " + v.type_name());
  List out;
  for (const auto& [k, item] : v.as_dict().entries) out.push_back(Value::tuple(List{Value(k), item}));
  return Value(std::move(out));
}

// select/reject(test, args…) and selectattr/rejectattr(attribute, test, args…).
Value select(const Value& v, CallArgs& args, bool by_attribute, bool keep) {
  std::size_t next = 0;
  std::string attribute;
  if (by_attribute) {
    if (args.positional.empty()) fail_render("selectattr/rejectattr need an attribute name");
    attribute = args.positional[next++].str();
  }
  std::string test;
  CallArgs test_args;
  if (next < args.positional.size()) {
    test = args.positional[next++].str();
    test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(next), args.positional.end());
    if (!is_known_test(test)) fail_render("no test named '" + test + "'");
  }
  List out;
  for (const Value& item : iterate(v, "select")) {
    const Value subject = by_attribute ? attribute_path(item, attribute) : item;
    const bool passes = test.empty() ? subject.truthy() : apply_test(test, subject, test_args);
    if (passes == keep) out.push_back(item);
  }
  return Value(std::move(out));
}

Value f_select(const Value& v, CallArgs& a, const RenderLimits&) { return select(v, a, false, true); }
Value f_reject(const Value& v, CallArgs& a, const RenderLimits&) { return select(v, a, false, false); }
Value f_selectattr(const Value& v, CallArgs& a, const RenderLimits&) { return select(v, a, true, true); }
Value f_rejectattr(const Value& v, CallArgs& a, const RenderLimits&) { return select(v, a, true, false); }

Value f_map(const Value& v, CallArgs& args, const RenderLimits& limits) {
  List out;
  if (const Value* attribute = argument(args, 99, "attribute")) {
    const Value* fallback = argument(args, 99, "default");
    for (const Value& item : iterate(v, "map")) {
      Value got = attribute_path(item, attribute->str());
      out.push_back(got.is_undefined() && fallback ? *fallback : got);
    }
    return Value(std::move(out));
  }
  if (args.positional.empty()) fail_render("map needs a filter name or attribute=");
  const std::string filter = args.positional.front().str();
  if (!is_known_filter(filter)) fail_render("no filter named '" + filter + "'");
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.named = args.named;
  for (const Value& item : iterate(v, "map")) {
    CallArgs each = rest;
    out.push_back(apply_filter(filter, item, each, limits));
  }
  return Value(std::move(out));
}

Value f_reverse(const Value& v, CallArgs&, const RenderLimits&) {
  if (v.is_string()) {
    auto cps = text::code_points(v.as_string());
    std::string out;
    for (auto it = cps.rbegin(); it != cps.rend(); ++it) out.append(*it);
    return Value(std::move(out));
  }
  List items = iterate(v, "reverse");
  std::reverse(items.begin(), items.end());
  return Value(std::move(items));
}

Value f_safe(const Value& v, CallArgs&, const RenderLimits&) { return v; }

Value f_indent(const Value& v, CallArgs& args, const RenderLimits&) {
  const Value width = arg_or(args, 0, "width", Value(4));
  const std::string unit = width.is_string() ? width.as_string()
                                             : std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, to_int_index(width, "indent width"))), ' ');
  const bool first = arg_or(args, 1, "first", Value(false)).truthy();
  const bool blank = arg_or(args, 2, "blank", Value(false)).truthy();
  const auto lines = text::splitlines(v.str() + "\n");
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += "\n";
    if (i > 0 && (blank || !lines[i].empty())) out += unit;
    out += lines[i];
  }
  return Value(first ? unit + out : out);
}

Value f_abs(const Value& v, CallArgs&, const RenderLimits&) {
  if (v.kind() == K::kFloat) return Value(std::fabs(v.as_double()));
  if (v.is_number() && v.as_int() >= 0) return Value(v.as_int());
  return negate(v);  // a negative integer, or the error for a non-number
}

Value f_round(const Value& v, CallArgs& args, const RenderLimits&) {
  if (!v.is_number()) fail_render("round: expected a number, got " + v.type_name());
  const double scale = std::pow(10.0, static_cast<double>(to_int_index(arg_or(args, 0, "precision", Value(0)), "round precision")));
  const std::string method = string_arg(args, 1, "method", "common");
  const double x = v.as_double() * scale;
  const double r = method == "floor" ? std::floor(x) : method == "ceil" ? std::ceil(x) : std::round(x);
  return Value(r / scale);
}

Value f_sum(const Value& v, CallArgs& args, const RenderLimits& limits) {
  Value total = arg_or(args, 1, "start", Value(0));
  const Value* attribute = argument(args, 0, "attribute");
  for (const Value& item : iterate(v, "sum"))
    total = binary_op("+", total, attribute ? attribute_path(item, attribute->str()) : item, limits);
  return total;
}

Value f_unique(const Value& v, CallArgs&, const RenderLimits&) {
  List out;
  for (const Value& item : iterate(v, "unique")) {
    bool seen = false;
    for (const Value& kept : out) seen = seen || values_equal(kept, item);
    if (!seen) out.push_back(item);
  }
  return Value(std::move(out));
}

Value f_attr(const Value& v, CallArgs& args, const RenderLimits&) { return get_attr(v, string_arg(args, 0, "name", "")); }

Value f_count(const Value& v, CallArgs& a, const RenderLimits& l) { return f_length(v, a, l); }

const std::map<std::string, FilterFn>& filters() {
  static const std::map<std::string, FilterFn> table = {
      {"abs", f_abs},         {"attr", f_attr},           {"capitalize", f_capitalize}, {"count", f_count},
      {"d", f_default},       {"default", f_default},     {"first", f_first},           {"float", f_float},
      {"indent", f_indent},   {"int", f_int},             {"items", f_items},           {"join", f_join},
      {"last", f_last},       {"length", f_length},       {"list", f_list},             {"lower", f_lower},
      {"map", f_map},         {"reject", f_reject},       {"rejectattr", f_rejectattr}, {"replace", f_replace},
      {"reverse", f_reverse}, {"round", f_round},         {"safe", f_safe},             {"select", f_select},
      {"selectattr", f_selectattr}, {"string", f_string}, {"sum", f_sum},               {"title", f_title},
      {"tojson", f_tojson},   {"trim", f_trim},           {"unique", f_unique},         {"upper", f_upper},
  };
  return table;
}

}  // namespace

bool is_known_filter(const std::string& name) { return filters().count(name) != 0; }

Value apply_filter(const std::string& name, const Value& subject, CallArgs& args, const RenderLimits& limits) {
  const auto it = filters().find(name);
  if (it == filters().end()) fail_render("no filter named '" + name + "'");
  return it->second(subject, args, limits);
}

}  // namespace memfit::chat
