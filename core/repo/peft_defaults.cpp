// core/repo/peft_defaults.cpp — the modules LoRA wraps when adapter_config.json's target_modules
// is null: PEFT's TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING (peft/utils/constants.py),
// keyed by the base config's top-level model_type as LoraModel._prepare_adapter_config reads it.
#include <array>

#include "peft_config.h"

namespace memfit::repo::peft {
namespace {

struct Default {
  const char* model_type;
  std::array<const char*, 4> targets;  // unused places null
};

// In PEFT's order; a model_type not here is PEFT's "Please specify `target_modules`".
const Default kLoraDefaults[] = {
    {"t5", {{"q", "v"}}},
    {"mt5", {{"q", "v"}}},
    {"bart", {{"q_proj", "v_proj"}}},
    {"gpt2", {{"c_attn"}}},
    {"bloom", {{"query_key_value"}}},
    {"blip-2", {{"q", "v", "q_proj", "v_proj"}}},
    {"opt", {{"q_proj", "v_proj"}}},
    {"gptj", {{"q_proj", "v_proj"}}},
    {"gpt_neox", {{"query_key_value"}}},
    {"gpt_neo", {{"q_proj", "v_proj"}}},
    {"bert", {{"query", "value"}}},
    {"roberta", {{"query", "value"}}},
    {"xlm-roberta", {{"query", "value"}}},
    {"electra", {{"query", "value"}}},
    {"deberta-v2", {{"query_proj", "value_proj"}}},
    {"deberta", {{"in_proj"}}},
    {"layoutlm", {{"query", "value"}}},
    {"llama", {{"q_proj", "v_proj"}}},
    {"llama4", {{"q_proj", "v_proj"}}},
    {"chatglm", {{"query_key_value"}}},
    {"gpt_bigcode", {{"c_attn"}}},
    {"mpt", {{"Wqkv"}}},
    {"RefinedWebModel", {{"query_key_value"}}},
    {"RefinedWeb", {{"query_key_value"}}},
    {"falcon", {{"query_key_value"}}},
    {"btlm", {{"c_proj", "c_attn"}}},
    {"codegen", {{"qkv_proj"}}},
    {"mistral", {{"q_proj", "v_proj"}}},
    {"mixtral", {{"q_proj", "v_proj"}}},
    {"stablelm", {{"q_proj", "v_proj"}}},
    {"phi", {{"q_proj", "v_proj", "fc1", "fc2"}}},
    {"gemma", {{"q_proj", "v_proj"}}},
    {"gemma2", {{"q_proj", "v_proj"}}},
    {"gemma3_text", {{"q_proj", "v_proj"}}},
    {"qwen2", {{"q_proj", "v_proj"}}},
    {"qwen3", {{"q_proj", "v_proj"}}},
};

}  // namespace

std::optional<std::vector<std::string>> lora_default_targets(const std::string& model_type) {
  for (const Default& d : kLoraDefaults)
    if (model_type == d.model_type) {
      std::vector<std::string> out;
      for (const char* t : d.targets)
        if (t) out.emplace_back(t);
      return out;
    }
  return std::nullopt;
}

}  // namespace memfit::repo::peft
