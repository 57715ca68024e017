// Pixtral's vision encoder (transformers models/pixtral/modeling_pixtral.py and
// configuration_pixtral.py, 4.45 through main): PixtralVisionModel (model_type pixtral), the
// tower of Mistral 3 (Mistral-Small-3.x) and of LLaVA-format Pixtral-12B.
//
// patch_conv Conv2d(num_channels, hidden, patch, stride patch, bias=False), ln_pre
// PixtralRMSNorm, transformer.layers.N = PixtralAttentionLayer {attention_norm, feed_forward
// (gated MLP: gate/up/down without bias, act_fn), attention (k, v, q, o without bias, each
// [hidden, hidden]: the projections use hidden / heads, not the config's head_dim), ffn_norm},
// then patch_positional_embedding, a 2-D rotary table: inv_freq
// [(image_size / patch_size)^2, head_dim] float32, non-persistent. PixtralVisionConfig defaults:
// hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, num_attention_heads=16,
// num_channels=3, image_size=1024, patch_size=16, hidden_act="gelu", head_dim=hidden / heads.
#include <fmt/format.h>

#include "common.h"
#include "family_dims.h"
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  if (r.class_name != "PixtralVisionModel")
    throw Error(ErrorCode::kUnknownClass, fmt::format("class '{}' is not described for pixtral", r.class_name));
  const std::int64_t hidden = c.dim_or({"hidden_size"}, 1024);
  const std::int64_t inter = c.dim_or({"intermediate_size"}, 4096);
  const std::int64_t layers = c.repeats_or({"num_hidden_layers"}, 24);
  const std::int64_t heads = c.dim_or({"num_attention_heads"}, 16);
  const std::int64_t channels = c.dim_or({"num_channels"}, 3);
  const std::int64_t patch = c.dim_or({"patch_size"}, 16);
  const std::int64_t side = c.dim_or({"image_size"}, 1024) / patch;
  const std::int64_t rope_dim = head_dim(c, hidden, heads);
  const std::string act = c.string_or({"hidden_act"}, "gelu");
  TreeBuilder b{"PixtralVisionModel"};
  b.set_no_split({"PixtralAttentionLayer"});
  nn::conv2d(b, "patch_conv", channels, hidden, patch, patch, false);
  nn::rms_norm(b, "ln_pre", hidden, "PixtralRMSNorm");
  {
    auto t = b.module("transformer", "PixtralTransformer");
    auto list = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < layers; ++i) {
      auto l = b.item(i, "PixtralAttentionLayer");
      nn::rms_norm(b, "attention_norm", hidden, "PixtralRMSNorm");
      gated_mlp(b, "feed_forward", "PixtralMLP", hidden, inter, false, act);
      {
        auto a = b.module("attention", "PixtralAttention");
        nn::linear(b, "k_proj", hidden, hidden, false);
        nn::linear(b, "v_proj", hidden, hidden, false);
        nn::linear(b, "q_proj", hidden, hidden, false);
        nn::linear(b, "o_proj", hidden, hidden, false);
      }
      nn::rms_norm(b, "ffn_norm", hidden, "PixtralRMSNorm");
    }
  }
  {
    auto p = b.module("patch_positional_embedding", "PixtralRotaryEmbedding");
    b.buffer("inv_freq", {side * side, rope_dim}, DType::kF32, false);
  }
  // An encoder: no KV cache; the dims size its activations (patches as positions).
  if (r.dims)
    *r.dims = uniform_model_dims(c, {hidden, 0, layers, heads, heads, hidden / heads, inter, side * side, false,
                                     read_norm_eps(c, {"rms_norm_eps", "layer_norm_eps"}, 1e-5)});
  return b.finish();
}

}  // namespace

const Family& pixtral_family() {
  static const Family f{"transformers", {"pixtral"}, {{"PixtralVisionModel", "AutoModel"}}, &build};
  return f;
}

}  // namespace memfit::arch
