// The shared layout of transformers' vision-language models (Gemma 3, LLaVA, LLaVA-NeXT,
// PaliGemma, Mistral 3, Llama 4): a vision tower, a projector and a language model, each built
// from its own nested config the way transformers builds it —
// `AutoModel.from_config(config.vision_config)` and
// `AutoModelForCausalLM.from_config(config.text_config)` — so the parts are the registered
// families' own trees, grafted under the composite's attribute names.
//
// The composite classes keep the layout their checkpoints are stored in (transformers before
// 5.0, and the Hub's safetensors today): `vision_tower.*`, `multi_modal_projector.*`,
// `language_model.model.*`, `language_model.lm_head.*`. Current transformers renames them on load
// (`_checkpoint_conversion_mapping`), the same tensors and bytes.
#pragma once

#include <string>
#include <string_view>

#include "common.h"
#include "function_ref.h"

namespace memfit::arch {

// Adds `sub` (a finished tree) as the child module `name` of the current module: its modules,
// tensors, eras and ties, renamed under the new prefix. The composite's no-split classes are the
// union of its parts' (transformers collects _no_split_modules from every submodule).
void graft(TreeBuilder& b, std::string_view name, const TensorTree& sub,
           std::vector<std::string>& no_split);

// A nested config (`key`) when present, else `fallback` (the composite config class's default
// for that part, as JSON text; "{}" for the part's own class defaults).
Config part_config(const Config& c, std::string_view key, std::string_view fallback = "{}");

// The language model of a composite: the family of `text.model_type` (`default_type` when the
// nested config has none, as the composite's config class does), its class for `auto_class`
// ("AutoModelForCausalLM" or "AutoModel"). `dims`: where the decoder's dimensions go — the
// composite's dims are its language model's.
TensorTree language_model(const Config& text, std::string_view default_type,
                          std::string_view auto_class, std::string_view model_name,
                          std::optional<ModelDims>* dims);

// AutoModel.from_config(vision_config): the tower class of `vision.model_type` (`default_type`
// when absent) — clip_vision_model, siglip_vision_model, siglip2_vision_model, pixtral.
TensorTree vision_model(const Config& vision, std::string_view default_type,
                        std::string_view model_name);

// The `hidden_size` of a nested config, or its class default.
std::int64_t part_hidden(const Config& part, std::int64_t fallback);

// LLaVA-style projectors take the tower's features from one layer (`vision_feature_layer` an
// int) or several concatenated (a list): how many.
std::int64_t vision_feature_layers(const Config& c);

// A composite's parts, in its registration order: the tower (`vision_name`, a finished tree),
// what `between` adds (the projector, LLaVA-NeXT's image_newline), then `language_model`. The
// generation class (`...ForConditionalGeneration`) holds the stored layout with a causal-LM
// language model; the base class (`base_class`, current transformers' AutoModel) a bare one.
// The composite's dims are its language model's (BuildRequest::dims).
struct VlmParts {
  std::string_view base_class;         // "Gemma3Model"
  std::string_view vision_name = "vision_tower";
  const TensorTree* vision = nullptr;
  const Config* text = nullptr;
  std::string_view text_default_type;  // the composite config's default text model_type
};
using PartFn = FunctionRef<void(TreeBuilder& b)>;
TensorTree build_vlm(const BuildRequest& r, const VlmParts& parts, const PartFn& between);

}  // namespace memfit::arch
