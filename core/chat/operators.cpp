// Python's operators as Jinja applies them to template values.
#include <cmath>

#include "builtins.h"
#include "template_error.h"
#include "text.h"

namespace memfit::chat {
namespace {

using K = Value::Kind;

bool is_int_like(const Value& v) { return v.kind() == K::kInt || v.kind() == K::kBool; }

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  fail_render("unsupported operand types for " + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
}

// Python's integers are unbounded; memfit's are 64-bit and say so instead of wrapping.
void check_overflow(bool overflow, const std::string& op) {
  if (overflow) fail_render("integer overflow in " + op + " (memfit's integers are 64-bit)");
}

void check_size(std::size_t bytes, const RenderLimits& limits) {
  if (bytes > limits.max_output_bytes)
    throw TemplateError(ErrorCode::kTemplateLimit, "a value of " + std::to_string(bytes) +
                                                       " bytes is over the output cap of " +
                                                       std::to_string(limits.max_output_bytes));
}

Value repeat(const Value& seq, std::int64_t times, const RenderLimits& limits) {
  if (times <= 0) return seq.is_string() ? Value(std::string()) : Value(List{});
  if (seq.is_string()) {
    const auto n = static_cast<std::size_t>(times);
    if (!seq.as_string().empty() && n > limits.max_output_bytes / seq.as_string().size() + 1)
      check_size(limits.max_output_bytes + 1, limits);
    std::string out;
    check_size(seq.as_string().size() * n, limits);
    for (std::size_t i = 0; i < n; ++i) out += seq.as_string();
    return Value(std::move(out));
  }
  const List& items = seq.as_list();
  if (!items.empty() && static_cast<std::uint64_t>(times) > limits.max_loop_iterations / items.size())
    throw TemplateError(ErrorCode::kTemplateLimit, "list repetition over the iteration cap");
  List out;
  for (std::int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
  return Value(std::move(out));
}

double python_fmod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  if (!a.is_number() || !b.is_number()) unsupported(op, a, b);
  if (is_int_like(a) && is_int_like(b)) {
    const std::int64_t x = a.as_int(), y = b.as_int();
    std::int64_t r = 0;
    if (op == "+" || op == "-" || op == "*") {
      check_overflow(op == "+" ? __builtin_add_overflow(x, y, &r)
                     : op == "-" ? __builtin_sub_overflow(x, y, &r)
                                 : __builtin_mul_overflow(x, y, &r), op);
      return Value(r);
    }
    if (op == "/") {
      if (y == 0) fail_render("division by zero");
      return Value(static_cast<double>(x) / static_cast<double>(y));
    }
    if (op == "//" || op == "%") {
      if (y == 0) fail_render("integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) fail_render("integer overflow in " + op);
      std::int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        --q;
        m += y;
      }
      return Value(op == "//" ? q : m);
    }
    if (op == "**") {
      if (y < 0) return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
      std::int64_t result = 1;
      for (std::int64_t i = 0; i < y; ++i) {
        check_overflow(__builtin_mul_overflow(result, x, &r), op);
        result = r;
        if (result == 0 || result == 1) break;
      }
      return Value(result);
    }
  }
  const double x = a.as_double(), y = b.as_double();
  if (op == "+") return Value(x + y);
  if (op == "-") return Value(x - y);
  if (op == "*") return Value(x * y);
  if ((op == "/" || op == "//" || op == "%") && y == 0) fail_render("float division by zero");
  if (op == "/") return Value(x / y);
  if (op == "//") return Value(std::floor(x / y));
  if (op == "%") return Value(python_fmod(x, y));
  return Value(std::pow(x, y));
}

}  // namespace

void fail_undefined(const Value& v) {
  fail_render(v.name().empty() ? std::string("an undefined value was used") : v.name());
}

Value binary_op(const std::string& op, const Value& a, const Value& b, const RenderLimits& limits) {
  if (op == "~") {
    std::string s = a.str() + b.str();
    check_size(s.size(), limits);
    return Value(std::move(s));
  }
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      check_size(a.as_string().size() + b.as_string().size(), limits);
      return Value(a.as_string() + b.as_string());
    }
    if (a.is_list() && b.is_list()) {
      List out = a.as_list();
      out.insert(out.end(), b.as_list().begin(), b.as_list().end());
      return Value(std::move(out));
    }
  }
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && is_int_like(b)) return repeat(a, b.as_int(), limits);
    if ((b.is_string() || b.is_list()) && is_int_like(a)) return repeat(b, a.as_int(), limits);
  }
  if (op == "%" && a.is_string()) fail_render("printf-style '%' formatting of strings is not supported");
  return arithmetic(op, a, b);
}

namespace {

// -1, 0, 1 as Python orders numbers, strings and lists; a TypeError otherwise.
int order(const Value& a, const Value& b, const std::string& op) {
  if (a.is_number() && b.is_number()) {
    if (is_int_like(a) && is_int_like(b)) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
    return a.as_double() < b.as_double() ? -1 : a.as_double() > b.as_double();
  }
  if (a.is_string() && b.is_string()) return a.as_string().compare(b.as_string()) < 0 ? -1 : a.as_string() > b.as_string();
  if (a.is_list() && b.is_list()) {
    const List &x = a.as_list(), &y = b.as_list();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (!values_equal(x[i], y[i])) return order(x[i], y[i], op);
    return x.size() < y.size() ? -1 : x.size() > y.size();
  }
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  fail_render("'" + op + "' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'");
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case K::kUndefined: return false;  // Undefined iterates as empty
    case K::kString:
      if (!item.is_string()) fail_render("'in <string>' requires a string as left operand, not " + item.type_name());
      return container.as_string().find(item.as_string()) != std::string::npos;
    case K::kList:
      for (const Value& v : container.as_list())
        if (values_equal(v, item)) return true;
      return false;
    case K::kDict:
    case K::kNamespace: return item.is_string() && container.as_dict().find(item.as_string()) != nullptr;
    default: fail_render("argument of type '" + container.type_name() + "' is not iterable");
  }
}

}  // namespace

bool compare_op(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return values_equal(a, b);
  if (op == "!=") return !values_equal(a, b);
  if (op == "in") return contains(b, a);
  if (op == "not in") return !contains(b, a);
  const int o = order(a, b, op);
  if (op == "<") return o < 0;
  if (op == ">") return o > 0;
  if (op == "<=") return o <= 0;
  return o >= 0;
}

Value negate(const Value& v) {
  if (is_int_like(v)) {
    if (v.as_int() == INT64_MIN) fail_render("integer overflow in unary -");
    return Value(-v.as_int());
  }
  if (v.kind() == K::kFloat) return Value(-v.as_double());
  if (v.is_undefined()) fail_undefined(v);
  fail_render("bad operand type for unary -: '" + v.type_name() + "'");
}

Value get_attr(const Value& subject, const std::string& name) {
  if (subject.is_undefined()) fail_undefined(subject);
  Value method = bound_method(subject, name);
  if (!method.is_undefined()) return method;
  if (subject.is_mapping())
    if (const Value* v = subject.as_dict().find(name)) return *v;
  return Value::undefined("'" + subject.type_name() + "' has no attribute '" + name + "'");
}

std::int64_t to_int_index(const Value& v, const char* what) {
  if (!is_int_like(v)) fail_render(std::string(what) + " must be an integer, not " + v.type_name());
  return v.as_int();
}

Value get_item(const Value& subject, const Value& key) {
  if (subject.is_undefined()) fail_undefined(subject);
  if (subject.is_mapping() && key.is_string()) {
    if (const Value* v = subject.as_dict().find(key.as_string())) return *v;
  } else if ((subject.is_list() || subject.is_string()) && is_int_like(key)) {
    const auto cps = subject.is_string() ? text::code_points(subject.as_string()) : std::vector<std::string_view>{};
    const auto size = static_cast<std::int64_t>(subject.is_list() ? subject.as_list().size() : cps.size());
    std::int64_t i = key.as_int();
    if (i < 0) i += size;
    if (i >= 0 && i < size)
      return subject.is_list() ? subject.as_list()[static_cast<std::size_t>(i)]
                               : Value(std::string(cps[static_cast<std::size_t>(i)]));
    return Value::undefined(subject.type_name() + " has no element " + std::to_string(key.as_int()));
  }
  if (key.is_string()) return get_attr(subject, key.as_string());
  return Value::undefined("'" + subject.type_name() + "' has no item " + key.repr());
}

Value get_slice(const Value& subject, const Value& start, const Value& stop, const Value& step) {
  if (subject.is_undefined()) fail_undefined(subject);
  if (!subject.is_list() && !subject.is_string()) fail_render("'" + subject.type_name() + "' cannot be sliced");
  const auto cps = subject.is_string() ? text::code_points(subject.as_string()) : std::vector<std::string_view>{};
  const auto n = static_cast<std::int64_t>(subject.is_list() ? subject.as_list().size() : cps.size());
  const std::int64_t s = step.is_undefined() || step.is_none() ? 1 : to_int_index(step, "a slice step");
  if (s == 0) fail_render("slice step cannot be zero");
  // Python's slice.indices().
  auto bound = [&](const Value& v, std::int64_t fallback) {
    if (v.is_undefined() || v.is_none()) return fallback;
    std::int64_t i = to_int_index(v, "a slice index");
    if (i < 0) i += n;
    if (s > 0) return std::min(std::max<std::int64_t>(i, 0), n);
    return std::min(std::max<std::int64_t>(i, -1), n - 1);
  };
  const std::int64_t from = bound(start, s > 0 ? 0 : n - 1), to = bound(stop, s > 0 ? n : -1);
  List items;
  std::string chars;
  for (std::int64_t i = from; s > 0 ? i < to : i > to; i += s) {
    if (subject.is_list()) items.push_back(subject.as_list()[static_cast<std::size_t>(i)]);
    else chars.append(cps[static_cast<std::size_t>(i)]);
  }
  return subject.is_list() ? Value(std::move(items)) : Value(std::move(chars));
}

List iterate(const Value& v, const char* what) {
  switch (v.kind()) {
    case K::kUndefined: return {};
    case K::kList: return v.as_list();
    case K::kString: {
      List out;
      for (std::string_view cp : text::code_points(v.as_string())) out.emplace_back(std::string(cp));
      return out;
    }
    case K::kDict: {
      List out;
      for (const auto& entry : v.as_dict().entries) out.emplace_back(entry.first);
      return out;
    }
    default: fail_render(std::string(what) + ": '" + v.type_name() + "' is not iterable");
  }
}

const Value* argument(const CallArgs& args, std::size_t index, const char* name) {
  if (index < args.positional.size()) return &args.positional[index];
  for (const auto& [k, v] : args.named)
    if (k == name) return &v;
  return nullptr;
}

void check_arity(const CallArgs& args, std::size_t max_positional, const std::string& what) {
  if (args.positional.size() > max_positional)
    fail_render(what + " takes at most " + std::to_string(max_positional) + " positional arguments, got " +
                std::to_string(args.positional.size()));
}

}  // namespace memfit::chat
