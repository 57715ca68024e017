#include "value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "template_error.h"

namespace memfit::chat {

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

void Dict::set(const std::string& key, Value value) {
  for (auto& [k, v] : entries)
    if (k == key) {
      v = std::move(value);
      return;
    }
  entries.emplace_back(key, std::move(value));
}

Value Value::undefined(std::string hint) {
  Value v;
  v.s_ = std::make_shared<const std::string>(std::move(hint));
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}

Value::Value(bool b) : kind_(Kind::kBool), b_(b) {}
Value::Value(std::int64_t i) : kind_(Kind::kInt), i_(i) {}
Value::Value(double d) : kind_(Kind::kFloat), d_(d) {}
Value::Value(std::string s) : kind_(Kind::kString), s_(std::make_shared<const std::string>(std::move(s))) {}
Value::Value(List list) : kind_(Kind::kList), list_(std::make_shared<const List>(std::move(list))) {}
Value::Value(Dict dict) : kind_(Kind::kDict), dict_(std::make_shared<Dict>(std::move(dict))) {}

Value Value::tuple(List items) {
  Value v(std::move(items));
  v.b_ = true;
  return v;
}

Value Value::namespace_of(Dict attributes) {
  Value v(std::move(attributes));
  v.kind_ = Kind::kNamespace;
  return v;
}

Value Value::function(std::string name, Function fn) {
  Value v;
  v.kind_ = Kind::kFunction;
  v.s_ = std::make_shared<const std::string>(std::move(name));
  v.fn_ = std::make_shared<const Function>(std::move(fn));
  return v;
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return b_;
    case Kind::kInt: return i_ != 0;
    case Kind::kFloat: return d_ != 0.0;
    case Kind::kString: return !s_->empty();
    case Kind::kList: return !list_->empty();
    case Kind::kDict: return !dict_->entries.empty();
    case Kind::kNamespace:
    case Kind::kFunction: return true;
  }
  return false;
}

namespace {

std::string python_string_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const char quote = (has_single && s.find('"') == std::string::npos) ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + quote;
}

std::string join_reprs(const Value& v) {
  std::string out;
  if (v.is_list()) {
    out = v.is_tuple() ? "(" : "[";
    bool first = true;
    for (const Value& item : v.as_list()) {
      if (!first) out += ", ";
      first = false;
      out += item.repr();
    }
    if (v.is_tuple()) return out + (v.as_list().size() == 1 ? ",)" : ")");
    return out + "]";
  }
  out = "{";
  bool first = true;
  for (const auto& [k, item] : v.as_dict().entries) {
    if (!first) out += ", ";
    first = false;
    out += python_string_repr(k) + ": " + item.repr();
  }
  return out + "}";
}

}  // namespace

std::string Value::str() const {
  switch (kind_) {
    case Kind::kUndefined: return {};
    case Kind::kNone: return "None";
    case Kind::kBool: return b_ ? "True" : "False";
    case Kind::kInt: return std::to_string(i_);
    case Kind::kFloat: return python_float_repr(d_);
    case Kind::kString: return *s_;
    case Kind::kList:
    case Kind::kDict: return join_reprs(*this);
    case Kind::kNamespace: return "<Namespace " + join_reprs(*this) + ">";
    case Kind::kFunction: return "<function " + *s_ + ">";
  }
  return {};
}

std::string Value::repr() const { return kind_ == Kind::kString ? python_string_repr(*s_) : str(); }

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::kUndefined: return "undefined";
    case Kind::kNone: return "NoneType object";
    case Kind::kBool: return "bool object";
    case Kind::kInt: return "int object";
    case Kind::kFloat: return "float object";
    case Kind::kString: return "str object";
    case Kind::kList: return "list object";
    case Kind::kDict: return "dict object";
    case Kind::kNamespace: return "Namespace object";
    case Kind::kFunction: return "function";
  }
  return "object";
}

bool values_equal(const Value& a, const Value& b) {
  using K = Value::Kind;
  if (a.is_number() && b.is_number()) {
    if (a.kind() == K::kFloat || b.kind() == K::kFloat) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::kUndefined:
    case K::kNone: return true;
    case K::kString: return a.as_string() == b.as_string();
    case K::kList: {
      const List &x = a.as_list(), &y = b.as_list();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!values_equal(x[i], y[i])) return false;
      return true;
    }
    case K::kDict: {
      const Dict &x = a.as_dict(), &y = b.as_dict();
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [k, v] : x.entries) {
        const Value* other = y.find(k);
        if (!other || !values_equal(v, *other)) return false;
      }
      return true;
    }
    default: return &a.as_dict() == &b.as_dict();  // namespaces and functions: identity
  }
}

std::string python_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // The shortest %e text that reads back as d, then laid out as Python's repr: positional when
  // the decimal exponent is in [-4, 16), scientific otherwise.
  char buf[40];
  for (int precision = 0; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string text(buf);
  const std::size_t e_at = text.find('e');
  const int exponent = std::atoi(text.c_str() + e_at + 1);
  std::string sign, digits;
  for (std::size_t i = 0; i < e_at; ++i) {
    if (text[i] == '-') sign = "-";
    else if (text[i] != '.') digits += text[i];
  }
  if (exponent < -4 || exponent >= 16) {
    std::string mantissa = digits.substr(0, 1);
    if (digits.size() > 1) mantissa += "." + digits.substr(1);
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return sign + mantissa + exp_buf;
  }
  if (exponent < 0) return sign + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  const std::size_t int_digits = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= int_digits) return sign + digits + std::string(int_digits - digits.size(), '0') + ".0";
  return sign + digits.substr(0, int_digits) + "." + digits.substr(int_digits);
}

Value from_json(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(json.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = json.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<std::int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value(json.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      List list;
      list.reserve(json.size());
      for (const auto& item : json) list.push_back(from_json(item));
      return Value(std::move(list));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict dict;
      for (const auto& [k, item] : json.items()) dict.set(k, from_json(item));
      return Value(std::move(dict));
    }
    default: return Value::none();
  }
}

namespace {

void append_code_point_escape(std::string& out, std::uint32_t cp) {
  char buf[16];
  if (cp >= 0x10000) {
    cp -= 0x10000;
    std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
  } else {
    std::snprintf(buf, sizeof buf, "\\u%04x", cp);
  }
  out += buf;
}

void dump_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20) {
      append_code_point_escape(out, c);
    } else if (c >= 0x80 && ensure_ascii) {
      const std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      std::uint32_t cp = n == 1 ? c : (c & (0x7F >> n));
      for (std::size_t k = 1; k < n && i + 1 < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[++i]) & 0x3F);
      append_code_point_escape(out, cp);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

void dump(std::string& out, const Value& v, const JsonStyle& style, int depth) {
  using K = Value::Kind;
  const bool pretty = style.indent >= 0 || !style.indent_text.empty();
  const std::string unit = style.indent_text.empty() && style.indent > 0
                               ? std::string(static_cast<std::size_t>(style.indent), ' ')
                               : style.indent_text;
  auto newline = [&](int level) {
    if (!pretty) return;
    out += '\n';
    for (int i = 0; i < level; ++i) out += unit;
  };
  switch (v.kind()) {
    case K::kNone: out += "null"; return;
    case K::kBool: out += v.as_bool() ? "true" : "false"; return;
    case K::kInt: out += std::to_string(v.as_int()); return;
    case K::kFloat: {
      const double d = v.as_double();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : python_float_repr(d);
      return;
    }
    case K::kString: dump_string(out, v.as_string(), style.ensure_ascii); return;
    case K::kList: {
      const List& list = v.as_list();
      if (list.empty()) { out += "[]"; return; }
      out += '[';
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (i) out += style.item_separator;
        newline(depth + 1);
        dump(out, list[i], style, depth + 1);
      }
      newline(depth);
      out += ']';
      return;
    }
    case K::kDict: {
      auto entries = v.as_dict().entries;
      if (entries.empty()) { out += "{}"; return; }
      if (style.sort_keys)
        std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      out += '{';
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i) out += style.item_separator;
        newline(depth + 1);
        dump_string(out, entries[i].first, style.ensure_ascii);
        out += style.key_separator;
        dump(out, entries[i].second, style, depth + 1);
      }
      newline(depth);
      out += '}';
      return;
    }
    default:
      throw TemplateError(ErrorCode::kTemplateRender,
                          "tojson: Object of type " + v.type_name() + " is not JSON serializable");
  }
}

}  // namespace

std::string to_json_text(const Value& value, const JsonStyle& style) {
  std::string out;
  dump(out, value, style, 0);
  return out;
}

}  // namespace memfit::chat
