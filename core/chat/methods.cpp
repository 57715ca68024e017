// The str and dict methods chat templates call (Python's semantics; the sandbox refuses the
// mutating ones, so list.append / dict.update are not here).
#include "builtins.h"
#include "template_error.h"
#include "text.h"

namespace memfit::chat {
namespace {

std::string str_arg(const CallArgs& args, std::size_t i, const char* name, const std::string& what) {
  const Value* v = argument(args, i, name);
  if (!v || !v->is_string()) fail_render(what + " needs a string argument");
  return v->as_string();
}

// strip/lstrip/rstrip(chars=None)
Value strip_method(const std::string& s, const CallArgs& args, text::Side side) {
  const Value* chars = argument(args, 0, "chars");
  if (!chars || chars->is_none()) return Value(text::strip(s, side));
  if (!chars->is_string()) fail_render("strip arg must be None or str");
  return Value(text::strip(s, side, &chars->as_string()));
}

// startswith/endswith(prefix or tuple of prefixes)
Value affix_method(const std::string& s, const CallArgs& args, bool prefix) {
  const Value* arg = argument(args, 0, prefix ? "prefix" : "suffix");
  if (!arg) fail_render(std::string(prefix ? "startswith" : "endswith") + " needs an argument");
  const List candidates = arg->is_list() ? arg->as_list() : List{*arg};
  for (const Value& c : candidates) {
    if (!c.is_string()) fail_render("startswith/endswith first arg must be str or a tuple of str, not " + c.type_name());
    const std::string& a = c.as_string();
    if (a.size() <= s.size() && (prefix ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0))
      return Value(true);
  }
  return Value(false);
}

Value split_method(const std::string& s, const CallArgs& args) {
  const Value* sep = argument(args, 0, "sep");
  const Value* maxsplit = argument(args, 1, "maxsplit");
  const long limit = maxsplit ? static_cast<long>(to_int_index(*maxsplit, "split maxsplit")) : -1;
  if (sep && !sep->is_none() && sep->str().empty()) fail_render("split: empty separator");
  const std::string sep_text = sep && !sep->is_none() ? sep->str() : std::string();
  List out;
  for (std::string& piece : text::split(s, sep && !sep->is_none() ? &sep_text : nullptr, limit)) out.emplace_back(std::move(piece));
  return Value(std::move(out));
}

// str.format with {} / {0} / {name} fields (no format specs, conversions or attribute paths).
Value format_method(const std::string& s, const CallArgs& args) {
  std::string out;
  std::size_t next_auto = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '{' && i + 1 < s.size() && s[i + 1] == '{') { out += '{'; ++i; continue; }
    if (s[i] == '}' && i + 1 < s.size() && s[i + 1] == '}') { out += '}'; ++i; continue; }
    if (s[i] != '{') { out += s[i]; continue; }
    const std::size_t close = s.find('}', i);
    if (close == std::string::npos) fail_render("format: single '{' encountered in format string");
    const std::string field = s.substr(i + 1, close - i - 1);
    if (field.find_first_of(":!.[") != std::string::npos) fail_render("format: field '{" + field + "}' is not supported");
    const Value* v = nullptr;
    if (field.empty()) v = argument(args, next_auto++, "");
    else if (field.find_first_not_of("0123456789") == std::string::npos) v = argument(args, std::stoul(field), "");
    else v = argument(args, SIZE_MAX, field.c_str());
    if (!v) fail_render("format: no argument for field '{" + field + "}'");
    out += v->str();
    i = close;
  }
  return Value(std::move(out));
}

Value string_method(const std::string& s, const std::string& name, CallArgs& args) {
  if (name == "strip") return strip_method(s, args, text::Side::kBoth);
  if (name == "lstrip") return strip_method(s, args, text::Side::kLeft);
  if (name == "rstrip") return strip_method(s, args, text::Side::kRight);
  if (name == "startswith") return affix_method(s, args, true);
  if (name == "endswith") return affix_method(s, args, false);
  if (name == "split") return split_method(s, args);
  if (name == "upper") return Value(text::upper(s));
  if (name == "lower") return Value(text::lower(s));
  if (name == "title") return Value(text::python_title(s));
  if (name == "capitalize") return Value(text::capitalize(s));
  if (name == "replace") {
    const Value* count = argument(args, 2, "count");
    return Value(text::replace(s, str_arg(args, 0, "old", "replace"), str_arg(args, 1, "new", "replace"),
                               count ? static_cast<long>(to_int_index(*count, "replace count")) : -1));
  }
  if (name == "find") {
    const std::size_t at = s.find(str_arg(args, 0, "sub", "find"));
    return Value(at == std::string::npos ? std::int64_t{-1} : static_cast<std::int64_t>(text::length(s.substr(0, at))));
  }
  if (name == "count") {
    const std::string sub = str_arg(args, 0, "sub", "count");
    if (sub.empty()) return Value(static_cast<std::int64_t>(text::length(s) + 1));
    std::int64_t n = 0;
    for (std::size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
    return Value(n);
  }
  if (name == "join") {
    const Value* items = argument(args, 0, "iterable");
    if (!items) fail_render("join needs an iterable");
    std::string out;
    bool first = true;
    for (const Value& item : iterate(*items, "join")) {
      if (!item.is_string()) fail_render("join: sequence item: expected str instance, " + item.type_name() + " found");
      if (!first) out += s;
      first = false;
      out += item.as_string();
    }
    return Value(std::move(out));
  }
  if (name == "splitlines") {
    List out;
    for (std::string& line : text::splitlines(s)) out.emplace_back(std::move(line));
    return Value(std::move(out));
  }
  return format_method(s, args);
}

Value dict_method(const Dict& d, const std::string& name, CallArgs& args) {
  if (name == "get") {
    const Value* key = argument(args, 0, "key");
    if (!key) fail_render("get needs a key");
    if (key->is_string())
      if (const Value* v = d.find(key->as_string())) return *v;
    const Value* fallback = argument(args, 1, "default");
    return fallback ? *fallback : Value::none();
  }
  List out;
  for (const auto& [k, v] : d.entries) {
    if (name == "keys") out.emplace_back(k);
    else if (name == "values") out.push_back(v);
    else out.push_back(Value::tuple(List{Value(k), v}));
  }
  return Value(std::move(out));
}

bool is_one_of(const std::string& name, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (name == n) return true;
  return false;
}

}  // namespace

Value bound_method(const Value& subject, const std::string& name) {
  if (subject.is_string() &&
      is_one_of(name, {"strip", "lstrip", "rstrip", "startswith", "endswith", "split", "upper", "lower", "title",
                       "capitalize", "replace", "find", "count", "join", "splitlines", "format"})) {
    return Value::function("str." + name, [s = subject, name](CallArgs& args) { return string_method(s.as_string(), name, args); });
  }
  if (subject.kind() == Value::Kind::kDict && is_one_of(name, {"items", "keys", "values", "get"})) {
    return Value::function("dict." + name, [d = subject, name](CallArgs& args) { return dict_method(d.as_dict(), name, args); });
  }
  return Value::undefined();
}

}  // namespace memfit::chat
