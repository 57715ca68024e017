// model_index.json: the pipeline's class and its components (DiffusionPipeline.from_pretrained
// reads it with json.loads, then keeps the [library, class] pairs; other values are the
// pipeline's own arguments, such as requires_safety_checker).
#include <fmt/format.h>

#include "diffusers_parts.h"
#include "memfit/error.h"
#include "memfit/format/strict_json.h"

namespace memfit::repo::diffusers {
namespace {

constexpr const char* kFile = "model_index.json";

[[noreturn]] void invalid(const std::string& what) {
  throw Error(ErrorCode::kRepoInvalid, fmt::format("{}: {}", kFile, what));
}

// A component's key names its folder: a Python identifier in diffusers (it is an argument of the
// pipeline's __init__). Anything else ("../x", "a/b") could reach outside the component folders.
bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 128) return false;
  for (char ch : s)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'))
      return false;
  return true;
}

bool ends_with(const std::string& s, const char* tail) {
  const std::string t(tail);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

}  // namespace

PipelineIndex parse_model_index(std::string_view text) {
  Json j;
  if (auto err = parse_strict_json(text, 32, &j, JsonDialect::kPython))
    invalid("not valid JSON (" + err->detail + ")");
  if (!j.is_object()) invalid(std::string("expected a JSON object, got ") + j.type_name());
  PipelineIndex index;
  auto cls = j.find("_class_name");
  if (cls == j.end() || !cls->is_string() || cls->get<std::string>().empty())
    invalid("'_class_name' must name the pipeline class (a string)");
  index.class_name = cls->get<std::string>();
  if (auto v = j.find("_diffusers_version"); v != j.end() && v->is_string()) index.version = *v;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (!key.empty() && key[0] == '_') continue;  // metadata: _class_name, _name_or_path, …
    const Json& v = it.value();
    if (!v.is_array()) continue;  // a pipeline argument (requires_safety_checker: true)
    if (v.size() != 2)
      invalid(fmt::format("'{}' must be [library, class], got a list of {}", key, v.size()));
    if (!plain_name(key))
      invalid(fmt::format("component name '{}' is not a plain folder name (letters, digits, _)", key));
    if (v[0].is_null() && v[1].is_null()) {
      index.absent.push_back(key);
      continue;
    }
    if (!v[0].is_string() || !v[1].is_string() || v[1].get<std::string>().empty())
      invalid(fmt::format("'{}' must be [library, class] (two strings, or two nulls), got {}", key,
                          v.dump()));
    index.components.push_back({key, v[0].get<std::string>(), v[1].get<std::string>()});
  }
  return index;
}

bool is_weightless_class(const Component& c) {
  for (const char* tail : {"Tokenizer", "TokenizerFast", "Scheduler", "ImageProcessor",
                           "FeatureExtractor", "Processor"})
    if (ends_with(c.class_name, tail)) return true;
  return false;
}

}  // namespace memfit::repo::diffusers
