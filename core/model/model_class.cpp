#include "memfit/model/model_class.h"

#include <fmt/format.h>

#include "memfit/error.h"

namespace memfit {
namespace {

std::string class_list(const Family& f) {
  std::string out;
  for (const auto& c : f.classes) out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

// "modeling_deepseek.DeepseekForCausalLM" → "DeepseekForCausalLM"
std::string_view strip_module(std::string_view s) {
  const auto dot = s.rfind('.');
  return dot == std::string_view::npos ? s : s.substr(dot + 1);
}

}  // namespace

std::string select_class(const Family& family, const Config& config, Mode mode,
                         const std::string& class_override, std::vector<std::string>* notes) {
  const std::string base(family.classes.begin()->name);
  if (!class_override.empty()) {
    if (!find_class(family, class_override))
      throw Error(ErrorCode::kUnknownClass,
                  fmt::format("class '{}' is not described for this model; known: {}",
                              class_override, class_list(family)));
    return class_override;
  }
  if (mode == Mode::kAccelerate) {
    // accelerate: constructor = AutoModel unless auto_map names an AutoModelFor* class.
    const Json& j = config.json();
    auto it = j.find("auto_map");
    if (it != j.end() && it->is_object()) {
      for (const auto& [key, value] : it->items()) {
        if (key.rfind("AutoModelFor", 0) != 0) continue;
        for (const auto& c : family.classes)
          if (c.auto_class == key) return std::string(c.name);
        throw Error(ErrorCode::kUnknownClass,
                    fmt::format("{}: auto_map asks for {}, which memfit does not describe for "
                                "this model (known: {})",
                                config.where(), key, class_list(family)));
      }
      // Remote-code models: AutoModel in auto_map may name the base class of the remote file.
    }
    return base;
  }
  if (auto archs = config.string_list({"architectures"}); archs && !archs->empty()) {
    const std::string_view wanted = strip_module((*archs)[0]);
    if (find_class(family, wanted)) return std::string(wanted);
    if (notes)
      notes->push_back(fmt::format("architectures[0] is {}, which memfit does not describe; "
                                   "estimated {} instead (use --class to pick one of: {})",
                                   wanted, base, class_list(family)));
  }
  return base;
}

}  // namespace memfit
