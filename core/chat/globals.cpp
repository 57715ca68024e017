// The globals of transformers' template environment: Jinja's range, namespace and dict, and
// transformers' raise_exception and strftime_now.
#include <ctime>

#include "builtins.h"
#include "template_error.h"

namespace memfit::chat {
namespace {

Value range(CallArgs& args, const RenderLimits& limits) {
  check_arity(args, 3, "range");
  if (args.positional.empty()) fail_render("range expected at least 1 argument, got 0");
  std::int64_t start = 0, stop = 0, step = 1;
  if (args.positional.size() == 1) {
    stop = to_int_index(args.positional[0], "range's argument");
  } else {
    start = to_int_index(args.positional[0], "range's start");
    stop = to_int_index(args.positional[1], "range's stop");
    if (args.positional.size() == 3) step = to_int_index(args.positional[2], "range's step");
  }
  if (step == 0) fail_render("range() arg 3 must not be zero");
  const long double count = step > 0 ? (static_cast<long double>(stop) - start) / step
                                     : (static_cast<long double>(start) - stop) / -step;
  if (count > static_cast<long double>(limits.max_loop_iterations))
    throw TemplateError(ErrorCode::kTemplateLimit, "range() of about " + std::to_string(static_cast<long long>(count)) +
                                                       " items is over the iteration cap of " +
                                                       std::to_string(limits.max_loop_iterations));
  List out;
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.emplace_back(i);
  return Value(std::move(out));
}

Dict keyword_dict(const CallArgs& args, const char* what) {
  Dict d;
  for (const Value& positional : args.positional) {
    if (positional.kind() != Value::Kind::kDict) fail_render(std::string(what) + "() takes a dict and keyword arguments");
    for (const auto& [k, v] : positional.as_dict().entries) d.set(k, v);
  }
  for (const auto& [k, v] : args.named) d.set(k, v);
  return d;
}

Value strftime_now(CallArgs& args) {
  const Value* format = argument(args, 0, "format");
  if (!format || !format->is_string()) fail_render("strftime_now needs a format string");
  const std::time_t now = std::time(nullptr);
  std::tm local{};
#if defined(_WIN32)
  localtime_s(&local, &now);
#else
  localtime_r(&now, &local);
#endif
  char buf[512];
  const std::size_t n = std::strftime(buf, sizeof buf, format->as_string().c_str(), &local);
  return Value(std::string(buf, n));
}

}  // namespace

Value global_value(const std::string& name, const RenderLimits& limits) {
  if (name == "range") return Value::function("range", [limits](CallArgs& a) { return range(a, limits); });
  if (name == "namespace")
    return Value::function("namespace", [](CallArgs& a) { return Value::namespace_of(keyword_dict(a, "namespace")); });
  if (name == "dict") return Value::function("dict", [](CallArgs& a) { return Value(keyword_dict(a, "dict")); });
  if (name == "raise_exception")
    return Value::function("raise_exception", [](CallArgs& a) -> Value {
      const Value* message = argument(a, 0, "message");
      fail_render("raise_exception: " + (message ? message->str() : std::string()));
    });
  if (name == "strftime_now") return Value::function("strftime_now", strftime_now);
  return Value::undefined();
}

}  // namespace memfit::chat
