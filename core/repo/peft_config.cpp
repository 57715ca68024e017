#include "peft_config.h"

#include <regex>

#include <fmt/format.h>

#include "memfit/error.h"
#include "memfit/format/strict_json.h"
#include "memfit/model/config.h"

namespace memfit::repo::peft {
namespace {

constexpr const char* kWhere = "adapter_config.json";

[[noreturn]] void wrong(const char* key, const std::string& expected, const Json& got) {
  throw Error(ErrorCode::kWrongType, fmt::format("{}: '{}' must be {}, got {}", kWhere, key, expected,
                                                 got.dump().substr(0, 80)));
}

// A list of strings, or one string (`as_string`), or null/absent.
void names_or_regex(const Json& j, const char* key, std::vector<std::string>& list,
                    std::optional<std::string>& regex, bool* given = nullptr) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (given) *given = true;
  if (it->is_string()) {
    regex = it->get<std::string>();
    return;
  }
  if (!it->is_array()) wrong(key, "a list of module names or a regex string", *it);
  for (const auto& e : *it) {
    if (!e.is_string()) wrong(key, "a list of module names or a regex string", *it);
    list.push_back(e.get<std::string>());
  }
}

std::int64_t rank_value(const Json& v, const std::string& key) {
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > kMaxDim)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: '{}' must be a rank of at least 1, got {}", kWhere, key, v.dump().substr(0, 40)));
  return v.get<std::int64_t>();
}

std::regex compile(const std::string& pattern, const char* key) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw Error(ErrorCode::kRepoInvalid,
                fmt::format("{}: {} '{}' is not a regex memfit can read ({}; Python's lookbehind and "
                            "named groups are not supported)", kWhere, key, pattern, e.what()));
  }
}

bool ends_with_dotted(const std::string& name, const std::string& suffix) {
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
         name[name.size() - suffix.size() - 1] == '.';
}

// `(^|.*\.)m($|\..*)`: the module m, anywhere in the name, or below it.
bool under_module(const std::string& name, const std::string& m) {
  for (std::size_t at = name.find(m); at != std::string::npos; at = name.find(m, at + 1)) {
    const bool starts = at == 0 || name[at - 1] == '.';
    const std::size_t end = at + m.size();
    if (starts && (end == name.size() || name[end] == '.')) return true;
  }
  return false;
}

}  // namespace

bool AdapterConfig::all_linear() const {
  if (!target_regex) return false;
  std::string t = *target_regex;
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t == "all-linear";
}

std::string AdapterConfig::targets_text() const {
  if (target_regex) return "'" + *target_regex + "'";
  return "{" + fmt::format("{}", fmt::join(target_list, ", ")) + "}";
}

AdapterConfig parse_adapter_config(const std::string& text) {
  Json j;
  if (auto err = parse_strict_json(text, 64, &j, JsonDialect::kPython))
    throw Error(ErrorCode::kInvalidJson, fmt::format("{}: not valid JSON ({})", kWhere, err->detail));
  if (!j.is_object())
    throw Error(ErrorCode::kInvalidJson, fmt::format("{}: expected a JSON object, got {}", kWhere, j.type_name()));
  const Config c(j, kWhere);
  AdapterConfig a;
  a.peft_type = c.string_or({"peft_type"}, "");
  if (a.peft_type.empty())
    throw Error(ErrorCode::kRepoInvalid, fmt::format("{}: no 'peft_type' (LORA, IA3, …)", kWhere));
  a.task_type = c.string_or({"task_type"}, "");
  a.base_model = c.string_or({"base_model_name_or_path"}, "");
  if (!a.is_lora()) return a;
  a.r = c.has("r") ? rank_value(j["r"], "r") : 8;
  a.lora_alpha = c.number_or({"lora_alpha"}, 8);
  names_or_regex(j, "target_modules", a.target_list, a.target_regex, &a.targets_given);
  names_or_regex(j, "exclude_modules", a.exclude_list, a.exclude_regex);
  if (auto it = j.find("modules_to_save"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) wrong("modules_to_save", "a list of module names", *it);
    for (const auto& e : *it) {
      if (!e.is_string()) wrong("modules_to_save", "a list of module names", *it);
      a.modules_to_save.push_back(e.get<std::string>());
    }
  }
  if (auto it = j.find("layers_to_transform"); it != j.end() && !it->is_null()) {
    if (it->is_number_integer()) a.layers_to_transform = std::vector<std::int64_t>{it->get<std::int64_t>()};
    else a.layers_to_transform = c.int_list({"layers_to_transform"});
  }
  if (auto it = j.find("layers_pattern"); it != j.end() && !it->is_null()) {
    if (it->is_string()) a.layers_pattern.push_back(it->get<std::string>());
    else if (auto l = c.string_list({"layers_pattern"})) a.layers_pattern = *l;
  }
  for (const char* key : {"rank_pattern", "alpha_pattern"}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_object()) wrong(key, "an object of pattern → value", *it);
    for (auto e = it->begin(); e != it->end(); ++e) {
      const std::string where = std::string(key) + "['" + e.key() + "']";
      if (std::string(key) == "rank_pattern") a.rank_pattern.emplace_back(e.key(), rank_value(e.value(), where));
      else if (e.value().is_number()) a.alpha_pattern.emplace_back(e.key(), e.value().get<double>());
      else wrong(key, "an object of pattern → number", *it);
    }
  }
  a.use_dora = c.flag_or({"use_dora"}, false);
  a.lora_bias = c.flag_or({"lora_bias"}, false);
  a.bias = c.string_or({"bias"}, "none");
  if (a.bias != "none" && a.bias != "all" && a.bias != "lora_only")
    throw Error(ErrorCode::kInvalidValue, fmt::format("{}: 'bias' must be none, all or lora_only, got '{}'", kWhere, a.bias));
  if (auto it = j.find("target_parameters"); it != j.end() && it->is_array() && !it->empty())
    a.has_target_parameters = true;
  return a;
}

bool is_module_to_save(const AdapterConfig& config, const std::string& module) {
  // peft/utils/other.py _set_trainable: `key.endswith(target_key)`.
  for (const auto& m : config.modules_to_save)
    if (module.size() >= m.size() && module.compare(module.size() - m.size(), m.size(), m) == 0) return true;
  return false;
}

LoraSelect lora_select(const AdapterConfig& config) {
  struct Rules {
    AdapterConfig c;
    std::optional<std::regex> target, exclude;
    std::vector<std::regex> layer_patterns;
    std::vector<std::pair<std::regex, std::int64_t>> ranks;
  };
  auto rules = std::make_shared<Rules>();
  rules->c = config;
  if (config.target_regex && !config.all_linear()) rules->target = compile(*config.target_regex, "target_modules");
  if (config.exclude_regex) rules->exclude = compile(*config.exclude_regex, "exclude_modules");
  // get_pattern_key: re.match(rf"(.*\.)?({key})$", name), the first key in the file's order.
  for (const auto& [key, rank] : config.rank_pattern)
    rules->ranks.emplace_back(compile("(.*\\.)?(" + key + ")", "rank_pattern key"), rank);
  // The layer index: the first numbered segment after a dotted prefix (layers_pattern names it).
  if (config.layers_pattern.empty()) rules->layer_patterns.push_back(compile("^.*?\\.[^.]*\\.(\\d+)\\.", "layers_pattern"));
  for (const auto& p : config.layers_pattern)
    rules->layer_patterns.push_back(compile("^.*?\\." + p + "\\.(\\d+)\\.", "layers_pattern"));

  return [rules](const std::string& name, const LinearLayer* layer) -> std::optional<std::int64_t> {
    const AdapterConfig& c = rules->c;
    // check_target_module_exists, in its order: exclusions, modules_to_save, then the targets.
    if (rules->exclude && std::regex_match(name, *rules->exclude)) return std::nullopt;
    for (const auto& e : c.exclude_list)
      if (name == e || ends_with_dotted(name, e)) return std::nullopt;
    for (const auto& m : c.modules_to_save)
      if (under_module(name, m)) return std::nullopt;
    // A regex, all-linear (expanded to full names) and an exact name match are wrapped as they
    // are; only a suffix match ("….q_proj") is narrowed by layers_to_transform.
    bool suffix_only = false;
    if (c.all_linear()) {
      // _maybe_include_all_linear_layers: every Linear / Conv1D but the output embeddings.
      if (!(layer && layer->is_linear() && !layer->output_head)) return std::nullopt;
    } else if (rules->target) {
      if (!std::regex_match(name, *rules->target)) return std::nullopt;
    } else {
      bool exact = false;
      for (const auto& t : c.target_list) exact = exact || name == t;
      if (!exact) {
        for (const auto& t : c.target_list) suffix_only = suffix_only || ends_with_dotted(name, t);
        if (!suffix_only) return std::nullopt;
      }
    }
    if (suffix_only && c.layers_to_transform && !c.layers_to_transform->empty()) {
      std::optional<std::int64_t> index;
      for (const auto& p : rules->layer_patterns) {
        std::smatch m;
        if (std::regex_search(name, m, p)) {
          index = std::stoll(m[1].str().substr(0, 18));
          break;
        }
      }
      if (!index) return std::nullopt;
      bool in = false;
      for (std::int64_t l : *c.layers_to_transform) in = in || l == *index;
      if (!in) return std::nullopt;
    }
    for (const auto& [pattern, rank] : rules->ranks)
      if (std::regex_match(name, pattern)) return rank;
    return c.r;
  };
}

}  // namespace memfit::repo::peft
