// LLaVA and LLaVA-NeXT (transformers models/llava/modeling_llava.py, models/llava_next/
// modeling_llava_next.py and their configuration_*.py, 4.40 through main):
// LlavaForConditionalGeneration, LlavaModel; LlavaNextForConditionalGeneration, LlavaNextModel.
//
// LlavaConfig / LlavaNextConfig: vision_config defaults to a CLIPVisionConfig(hidden_size=1024,
// intermediate_size=4096, patch_size=14, image_size=336, num_hidden_layers=24,
// num_attention_heads=16, projection_dim=768) and model_type "clip_vision_model" (any AutoModel
// tower: SigLIP, Pixtral, ...); text_config to a LlamaConfig (model_type "llama"; any causal LM
// memfit knows). The projector is linear_1 [text hidden, vision hidden × feature layers]
// (vision_feature_layer: an int, or a list whose features are concatenated), act
// (projector_hidden_act, "gelu"), linear_2 [text hidden, text hidden], both with bias unless
// multimodal_projector_bias is false. LLaVA-NeXT adds image_newline [text hidden] after it.
// The generation classes keep the layout their checkpoints are stored in (composite.h).
#include "composite.h"
#include "families.h"

namespace memfit::arch {
namespace {

constexpr std::string_view kClipTower =
    R"({"model_type": "clip_vision_model", "hidden_size": 1024, "intermediate_size": 4096,
        "patch_size": 14, "image_size": 336, "num_hidden_layers": 24, "num_attention_heads": 16,
        "projection_dim": 768})";

TensorTree build(const BuildRequest& r, bool next) {
  const Config& c = r.config;
  const Config vision = part_config(c, "vision_config", kClipTower);
  const Config text = part_config(c, "text_config");
  const TensorTree tower = vision_model(vision, "clip_vision_model", r.model_name);
  // CLIPVisionConfig's hidden_size when the nested config leaves it out; LlamaConfig's 4096.
  const std::int64_t vision_hidden = part_hidden(vision, 768);
  const std::int64_t text_hidden = part_hidden(text, 4096);
  const bool bias = c.flag_or({"multimodal_projector_bias"}, true);
  const std::string prefix = next ? "LlavaNext" : "Llava";
  return build_vlm(r, {next ? "LlavaNextModel" : "LlavaModel", "vision_tower", &tower, &text, "llama"},
                   [&](TreeBuilder& b) {
                     {
                       auto p = b.module("multi_modal_projector", prefix + "MultiModalProjector");
                       nn::linear(b, "linear_1", vision_hidden * vision_feature_layers(c), text_hidden, bias);
                       nn::activation(b, "act", c.string_or({"projector_hidden_act"}, "gelu"));
                       nn::linear(b, "linear_2", text_hidden, text_hidden, bias);
                     }
                     if (next) b.param("image_newline", {text_hidden});
                   });
}

TensorTree build_llava(const BuildRequest& r) { return build(r, false); }
TensorTree build_llava_next(const BuildRequest& r) { return build(r, true); }

}  // namespace

const Family& llava_family() {
  static const Family f{"transformers",
                        {"llava"},
                        {{"LlavaModel", "AutoModel"},
                         {"LlavaForConditionalGeneration", "AutoModelForImageTextToText"}},
                        &build_llava};
  return f;
}

const Family& llava_next_family() {
  static const Family f{"transformers",
                        {"llava_next"},
                        {{"LlavaNextModel", "AutoModel"},
                         {"LlavaNextForConditionalGeneration", "AutoModelForImageTextToText"}},
                        &build_llava_next};
  return f;
}

}  // namespace memfit::arch
