// Llama 4 with vision (transformers models/llama4/modeling_llama4.py and
// configuration_llama4.py, 4.51 through main): Llama4ForConditionalGeneration (model_type
// llama4; also what AutoModel builds for it).
//
// vision_model is a Llama4VisionModel built from vision_config (Llama4VisionConfig defaults:
// hidden_size=768, intermediate_size=5632, 34 layers, 16 heads, 3 channels, image_size=448,
// patch_size=14, vision_output_dim=7680, projector_input_dim=4096, projector_output_dim=4096):
// patch_embedding {unfold (no tensors), linear [hidden, channels × patch², no bias]},
// class_embedding [hidden], positional_embedding_vlm [(image / patch)² + 1, hidden],
// rotary_embedding (its table is a plain attribute, no tensor), layernorm_pre, layernorm_post,
// model.layers.N {self_attn q/k/v/o with bias, mlp {activation_fn, fc1, fc2 with bias},
// input_layernorm, post_attention_layernorm}, vision_adapter.mlp {fc1 [projector_input_dim,
// intermediate_size], fc2 [projector_output_dim, projector_output_dim], activation_fn}, no
// biases. multi_modal_projector.linear_1 [text hidden, vision_output_dim], no bias; then
// language_model, a Llama4ForCausalLM (llama4_text.cpp) over text_config.
#include <fmt/format.h>

#include "composite.h"
#include "families.h"

namespace memfit::arch {
namespace {

TensorTree vision_tower(const Config& c) {
  const std::int64_t hidden = c.dim_or({"hidden_size"}, 768);
  const std::int64_t inter = c.dim_or({"intermediate_size"}, 5632);
  const std::int64_t layers = c.repeats_or({"num_hidden_layers"}, 34);
  const std::int64_t channels = c.dim_or({"num_channels"}, 3);
  const std::int64_t patch = c.dim_or({"patch_size"}, 14);
  const std::int64_t side = c.dim_or({"image_size"}, 448) / patch;
  const std::int64_t adapter_in = c.dim_or({"projector_input_dim"}, 4096);
  const std::int64_t adapter_out = c.dim_or({"projector_output_dim"}, 4096);
  require_divisible(c, hidden, "hidden_size", c.dim_or({"num_attention_heads"}, 16), "num_attention_heads");
  TreeBuilder b{"Llama4VisionModel"};
  b.set_no_split({"Llama4VisionEncoderLayer"});
  {
    auto p = b.module("patch_embedding", "Llama4UnfoldConvolution");
    b.stateless("unfold", "Unfold");
    nn::linear(b, "linear", channels * patch * patch, hidden, false);
  }
  b.param("class_embedding", {hidden});
  b.param("positional_embedding_vlm", {side * side + 1, hidden});
  b.stateless("rotary_embedding", "Llama4VisionRotaryEmbedding");
  nn::layer_norm(b, "layernorm_pre", hidden);
  nn::layer_norm(b, "layernorm_post", hidden);
  {
    auto m = b.module("model", "Llama4VisionEncoder");
    auto list = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < layers; ++i) {
      auto l = b.item(i, "Llama4VisionEncoderLayer");
      square_attention(b, "Llama4VisionAttention", {"q_proj", "k_proj", "v_proj", "o_proj"}, hidden);
      fc_mlp(b, "Llama4VisionMLP", hidden, inter, "GELU");  // nn.GELU(), whatever hidden_act says
      nn::layer_norm(b, "input_layernorm", hidden);
      nn::layer_norm(b, "post_attention_layernorm", hidden);
    }
  }
  {
    auto a = b.module("vision_adapter", "Llama4VisionPixelShuffleMLP");
    auto m = b.module("mlp", "Llama4VisionMLP2");
    nn::linear(b, "fc1", inter, adapter_in, false);
    nn::linear(b, "fc2", adapter_out, adapter_out, false);
    b.stateless("activation_fn", "GELU");
  }
  return b.finish();
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  if (r.class_name != "Llama4ForConditionalGeneration")
    throw Error(ErrorCode::kUnknownClass, fmt::format("class '{}' is not described for llama4", r.class_name));
  const Config vision = part_config(c, "vision_config");
  const Config text = part_config(c, "text_config");
  const TensorTree tower = vision_tower(vision);
  const std::int64_t vision_out = vision.dim_or({"vision_output_dim"}, 7680);
  const std::int64_t text_hidden = part_hidden(text, 5120);  // Llama4TextConfig's default
  return build_vlm(r, {"", "vision_model", &tower, &text, "llama4_text"}, [&](TreeBuilder& b) {
    auto p = b.module("multi_modal_projector", "Llama4MultiModalProjector");
    nn::linear(b, "linear_1", vision_out, text_hidden, false);
  });
}

}  // namespace

const Family& llama4_family() {
  static const Family f{"transformers",
                        {"llama4"},
                        {{"Llama4ForConditionalGeneration", "AutoModel"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
