// core/repo/peft_config.h — a PEFT adapter's adapter_config.json (peft/config.py, and
// tuners/lora/config.py for LoRA) and LoRA's module matching (tuners_utils.py
// check_target_module_exists, utils/other.py get_pattern_key).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "memfit/memory/lora.h"

namespace memfit::repo::peft {

struct AdapterConfig {
  std::string peft_type;        // "LORA", "IA3", "PREFIX_TUNING", …
  std::string task_type;        // "CAUSAL_LM", … ("" when null)
  std::string base_model;       // base_model_name_or_path
  std::int64_t r = 8;           // LoraConfig defaults
  double lora_alpha = 8;
  // target_modules: a list of names (or name suffixes), or one string: a regex the whole module
  // name must match (re.fullmatch), or "all-linear".
  std::vector<std::string> target_list;
  std::optional<std::string> target_regex;
  bool targets_given = false;   // false: null (PEFT then uses its per-architecture default)
  std::vector<std::string> exclude_list;
  std::optional<std::string> exclude_regex;
  std::vector<std::string> modules_to_save;
  std::optional<std::vector<std::int64_t>> layers_to_transform;
  std::vector<std::string> layers_pattern;
  std::vector<std::pair<std::string, std::int64_t>> rank_pattern;  // in the file's order
  std::vector<std::pair<std::string, double>> alpha_pattern;
  bool use_dora = false;
  bool lora_bias = false;
  std::string bias = "none";    // "none", "all", "lora_only"
  bool has_target_parameters = false;
  bool is_lora() const { return peft_type == "LORA"; }
  bool all_linear() const;
  std::string targets_text() const;  // "{q_proj, v_proj}", the regex, or "all-linear"
};

// The modules LoRA wraps when target_modules is null, for the base config's model_type (PEFT's
// per-architecture default); nullopt where PEFT has none and asks for target_modules.
std::optional<std::vector<std::string>> lora_default_targets(const std::string& model_type);

// Throws Error(kInvalidJson / kRepoInvalid / kWrongType) naming adapter_config.json and the key.
AdapterConfig parse_adapter_config(const std::string& text);

// The modules the config wraps and their ranks, as check_target_module_exists and
// LoraModel._create_and_replace (rank_pattern) decide. Throws Error(kRepoInvalid) for a regex
// memfit cannot read (std::regex's ECMAScript: Python's lookbehind and named groups are not in it).
LoraSelect lora_select(const AdapterConfig& config);

// A module of modules_to_save (PEFT: `(^|.*\.)m($|\..*)` matched against the module name) —
// never wrapped by LoRA, saved whole in the adapter file, replacing the base module on merge.
bool is_module_to_save(const AdapterConfig& config, const std::string& module);

}  // namespace memfit::repo::peft
