// Mistral 3 (Mistral-Small-3.1/3.2 with vision; transformers models/mistral3/modeling_mistral3.py
// and configuration_mistral3.py, 4.50 through main): Mistral3ForConditionalGeneration,
// Mistral3Model.
//
// LLaVA's layout (llava.cpp, composite.h) with a Pixtral tower (pixtral.cpp) and a projector
// that first normalizes and merges patches: norm Mistral3RMSNorm [vision hidden], patch_merger
// {merging_layer [vision hidden, vision hidden × spatial_merge_size²], no bias}, linear_1
// [text hidden, vision hidden × feature layers], act (projector_hidden_act), linear_2
// [text hidden, text hidden], with bias only when multimodal_projector_bias (default false).
// Mistral3Config's defaults when a part is absent: a PixtralVisionConfig with hidden_size=1024,
// intermediate_size=4096, patch_size=14, image_size=1540, 24 layers, 16 heads, head_dim=64, and
// a MistralConfig with hidden_size=5120, intermediate_size=32768, 40 layers, 32 heads, 8 KV
// heads, head_dim=128, vocab_size=131072, max_position_embeddings=131072,
// rope_theta=1e9, no sliding window.
#include "composite.h"
#include "families.h"

namespace memfit::arch {
namespace {

constexpr std::string_view kVisionDefault =
    R"({"model_type": "pixtral", "hidden_size": 1024, "intermediate_size": 4096, "patch_size": 14,
        "image_size": 1540, "num_hidden_layers": 24, "num_attention_heads": 16, "head_dim": 64,
        "hidden_act": "gelu"})";
constexpr std::string_view kTextDefault =
    R"({"model_type": "mistral", "hidden_size": 5120, "intermediate_size": 32768,
        "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
        "head_dim": 128, "vocab_size": 131072, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "rope_theta": 1000000000.0, "sliding_window": null})";

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  const Config vision = part_config(c, "vision_config", kVisionDefault);
  const Config text = part_config(c, "text_config", kTextDefault);
  const TensorTree tower = vision_model(vision, "pixtral", r.model_name);
  // PixtralVisionConfig's and MistralConfig's own defaults for a part that leaves them out.
  const std::int64_t vision_hidden = part_hidden(vision, 1024);
  const std::int64_t text_hidden = part_hidden(text, 4096);
  const std::int64_t merge = c.dim_or({"spatial_merge_size"}, 2);
  const bool bias = c.flag_or({"multimodal_projector_bias"}, false);
  return build_vlm(r, {"Mistral3Model", "vision_tower", &tower, &text, "mistral"},
                   [&](TreeBuilder& b) {
                     auto p = b.module("multi_modal_projector", "Mistral3MultiModalProjector");
                     nn::rms_norm(b, "norm", vision_hidden, "Mistral3RMSNorm");
                     {
                       auto m = b.module("patch_merger", "Mistral3PatchMerger");
                       nn::linear(b, "merging_layer", vision_hidden * merge * merge, vision_hidden, false);
                     }
                     nn::linear(b, "linear_1", vision_hidden * vision_feature_layers(c), text_hidden, bias);
                     nn::activation(b, "act", c.string_or({"projector_hidden_act"}, "gelu"));
                     nn::linear(b, "linear_2", text_hidden, text_hidden, bias);
                   });
}

}  // namespace

const Family& mistral3_family() {
  static const Family f{"transformers",
                        {"mistral3"},
                        {{"Mistral3Model", "AutoModel"},
                         {"Mistral3ForConditionalGeneration", "AutoModelForImageTextToText"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
