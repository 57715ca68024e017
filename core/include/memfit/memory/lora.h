// memfit/memory/lora.h — LoRA adapters exactly as PEFT creates them.
//
// Target matching is PEFT's check_target_module_exists for a list: a module matches target t
// when its name equals t or ends with "." + t. `all-linear` is PEFT's
// _maybe_include_all_linear_layers: every torch.nn.Linear / Conv1D except the output layer
// (get_output_embeddings()). Per target, PEFT's LoraLayer.update_layer adds
//   Linear / Conv1D : lora_A [r, in], lora_B [out, r]               → r·(in + out)
//   Embedding       : lora_embedding_A [r, num], lora_embedding_B [dim, r] → r·(num + dim)
//   Conv            : lora_A [r, in, k…], lora_B [out, r, 1…]       → r·(in·k… + out)
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/memory/linear_layers.h"
#include "memfit/model/tensor_tree.h"

namespace memfit {

struct LoraAdapter {
  std::string module;        // the wrapped module's dotted name
  std::int64_t a_rows = 0, a_cols = 0;  // lora_A shape [r, in]
  std::int64_t b_rows = 0, b_cols = 0;  // lora_B shape [out, r]
  std::uint64_t parameters() const {
    return static_cast<std::uint64_t>(a_rows * a_cols + b_rows * b_cols);
  }
};

struct LoraPlan {
  std::vector<LoraAdapter> adapters;
  std::uint64_t trainable_parameters = 0;
};

// "q_proj, v_proj" → {"q_proj", "v_proj"} (spaces trimmed, empty entries dropped).
std::vector<std::string> parse_lora_targets(std::string_view comma_separated);

// `targets`: module names (or name suffixes) as PEFT takes them, or the single entry
// "all-linear". Throws Error(kInvalidArgument) with PEFT's message when nothing matches or a
// matched module is of a type LoRA cannot wrap.
LoraPlan lora_plan(const TensorTree& tree, std::int64_t vocab, std::int64_t rank,
                   const std::vector<std::string>& targets);

// Any selection of modules: a module's dotted name and its layer (null when it is no layer LoRA
// can wrap) → the rank it is wrapped at, or nothing. A saved adapter_config.json's rules
// (target_modules as names or a regex, exclude_modules, layers_to_transform, rank_pattern) are
// such a function (core/repo/peft_config.cpp); the list form above is another.
using LoraSelect = std::function<std::optional<std::int64_t>(const std::string& module, const LinearLayer* layer)>;

// The same errors as above; `targets_text` names the selection in them ("{q_proj, v_proj}", a
// regex) and `how_matched` (may be empty) follows "not found in the base model".
LoraPlan lora_plan(const TensorTree& tree, std::int64_t vocab, const LoraSelect& select,
                   std::string_view targets_text, std::string_view how_matched = {});

}  // namespace memfit
