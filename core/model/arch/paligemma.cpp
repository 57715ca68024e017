// PaliGemma and PaliGemma 2 (transformers models/paligemma/modeling_paligemma.py and
// configuration_paligemma.py, 4.41 through main): PaliGemmaForConditionalGeneration,
// PaliGemmaModel.
//
// PaliGemmaConfig: vision_config defaults to SiglipVisionConfig(hidden_size=1152,
// intermediate_size=4096, patch_size=14, image_size=224, num_hidden_layers=27,
// num_attention_heads=16, vision_use_head=False); text_config to GemmaConfig(hidden_size=2048,
// num_hidden_layers=18, intermediate_size=16384, num_attention_heads=8, num_key_value_heads=1),
// model_type "gemma" (PaliGemma 2: "gemma2"). PaliGemmaMultiModalProjector is one
// linear [projection_dim, vision hidden] with bias; projection_dim (2048) is the top-level key,
// which the config copies into vision_config. The generation class keeps the layout its
// checkpoints are stored in (composite.h); Gemma ties lm_head to embed_tokens.
#include "composite.h"
#include "families.h"

namespace memfit::arch {
namespace {

constexpr std::string_view kVisionDefault =
    R"({"model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4096,
        "patch_size": 14, "image_size": 224, "num_hidden_layers": 27, "num_attention_heads": 16,
        "vision_use_head": false})";
constexpr std::string_view kTextDefault =
    R"({"model_type": "gemma", "hidden_size": 2048, "num_hidden_layers": 18,
        "intermediate_size": 16384, "num_attention_heads": 8, "num_key_value_heads": 1})";

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  const Config vision = part_config(c, "vision_config", kVisionDefault);
  const Config text = part_config(c, "text_config", kTextDefault);
  const TensorTree tower = vision_model(vision, "siglip_vision_model", r.model_name);
  const std::int64_t vision_hidden = part_hidden(vision, 768);  // SiglipVisionConfig's default
  const std::int64_t projection = c.dim_or({"projection_dim"}, 2048);
  return build_vlm(r, {"PaliGemmaModel", "vision_tower", &tower, &text, "gemma"},
                   [&](TreeBuilder& b) {
                     auto p = b.module("multi_modal_projector", "PaliGemmaMultiModalProjector");
                     nn::linear(b, "linear", vision_hidden, projection, true);
                   });
}

}  // namespace

const Family& paligemma_family() {
  static const Family f{"transformers",
                        {"paligemma"},
                        {{"PaliGemmaModel", "AutoModel"},
                         {"PaliGemmaForConditionalGeneration", "AutoModelForImageTextToText"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
