// SigLIP and SigLIP 2 (transformers models/siglip/modeling_siglip.py and
// models/siglip2/modeling_siglip2.py with their configuration_*.py, transformers 4.57 / main):
// SiglipModel, SiglipTextModel, SiglipVisionModel; Siglip2Model, Siglip2TextModel,
// Siglip2VisionModel. The towers of Gemma 3 and PaliGemma (composite.cpp builds them through
// AutoModel's `siglip_vision_model` / `siglip2_vision_model`).
//
// One layout for both: a pre-norm encoder (layer_norm1, self_attn {k, v, q, out_proj with bias},
// layer_norm2, mlp {activation_fn, fc1, fc2}), the text tower ending in final_layer_norm and a
// `head` Linear(hidden, projection_size), the vision tower ending in post_layernorm and, unless
// the config says `vision_use_head: false` (transformers: `hasattr(config, "vision_use_head")`),
// a multihead-attention pooling head (probe [1, 1, hidden], torch's nn.MultiheadAttention with
// in_proj_weight [3h, h] and in_proj_bias, layernorm, mlp). They differ in the patch embedding:
// SigLIP's Conv2d with a learned position per patch of the fixed image (and a non-persistent
// int64 position_ids), SigLIP 2's Linear over flattened patches with `num_patches` positions
// resized per image (no position_ids).
#include <fmt/format.h>

#include "common.h"
#include "composite.h"
#include "family_dims.h"
#include "families.h"

namespace memfit::arch {
namespace {

struct Tower {
  std::int64_t hidden, inter, layers, heads;
  std::string act;
};

struct VisionDims : Tower {
  std::int64_t channels, patch, positions;  // positions: patches of the image (SigLIP 2: num_patches)
  bool use_head;
};

struct TextDims : Tower {
  std::int64_t vocab, positions, projection;
};

// The defaults both versions' configuration classes share.
Tower read_tower(const Config& c) {
  Tower t;
  t.hidden = c.dim_or({"hidden_size"}, 768);
  t.inter = c.dim_or({"intermediate_size"}, 3072);
  t.layers = c.repeats_or({"num_hidden_layers"}, 12);
  t.heads = c.dim_or({"num_attention_heads"}, 12);
  t.act = c.string_or({"hidden_act"}, "gelu_pytorch_tanh");
  // SiglipAttention: "embed_dim must be divisible by num_heads".
  require_divisible(c, t.hidden, "hidden_size", t.heads, "num_attention_heads");
  return t;
}

// SiglipVisionConfig: image_size=224, patch_size=16, num_channels=3.
// Siglip2VisionConfig: num_patches=256, patch_size=16, num_channels=3.
VisionDims read_vision(const Config& c, bool v2) {
  VisionDims v;
  static_cast<Tower&>(v) = read_tower(c);
  v.channels = c.dim_or({"num_channels"}, 3);
  v.patch = c.dim_or({"patch_size"}, 16);
  if (v2) {
    v.positions = c.dim_or({"num_patches"}, 256);
  } else {
    const std::int64_t side = c.dim_or({"image_size"}, 224) / v.patch;
    v.positions = side * side;
  }
  v.use_head = c.flag_or({"vision_use_head"}, true);
  return v;
}

// SiglipTextConfig: vocab_size=32000, max_position_embeddings=64, projection_size=hidden_size.
TextDims read_text(const Config& c) {
  TextDims t;
  static_cast<Tower&>(t) = read_tower(c);
  t.vocab = c.dim_or({"vocab_size"}, 32000);
  t.positions = c.dim_or({"max_position_embeddings"}, 64);
  t.projection = c.dim_or({"projection_size"}, t.hidden);
  return t;
}

void encoder(TreeBuilder& b, const std::string& p, const Tower& t) {
  auto e = b.module("encoder", p + "Encoder");
  auto list = b.module("layers", "ModuleList");
  for (std::int64_t i = 0; i < t.layers; ++i) {
    auto l = b.item(i, p + "EncoderLayer");
    nn::layer_norm(b, "layer_norm1", t.hidden);
    square_attention(b, p + "Attention", {"k_proj", "v_proj", "q_proj", "out_proj"}, t.hidden);
    nn::layer_norm(b, "layer_norm2", t.hidden);
    fc_mlp(b, p + "MLP", t.hidden, t.inter, nn::activation_class(t.act));
  }
}

void pooling_head(TreeBuilder& b, const std::string& p, const VisionDims& v) {
  auto h = b.module("head", p + "MultiheadAttentionPoolingHead");
  b.param("probe", {1, 1, v.hidden});
  {
    auto a = b.module("attention", "MultiheadAttention");
    b.param("in_proj_weight", {3 * v.hidden, v.hidden});
    b.param("in_proj_bias", {3 * v.hidden});
    nn::linear(b, "out_proj", v.hidden, v.hidden, true, "NonDynamicallyQuantizableLinear");
  }
  nn::layer_norm(b, "layernorm", v.hidden);
  fc_mlp(b, p + "MLP", v.hidden, v.inter, nn::activation_class(v.act));
}

void vision_transformer(TreeBuilder& b, const std::string& p, const VisionDims& v, bool v2) {
  auto t = b.module("vision_model", p + "VisionTransformer");
  {
    auto e = b.module("embeddings", p + "VisionEmbeddings");
    if (v2) {
      nn::linear(b, "patch_embedding", v.channels * v.patch * v.patch, v.hidden);
      nn::embedding(b, "position_embedding", v.positions, v.hidden);
    } else {
      nn::conv2d(b, "patch_embedding", v.channels, v.hidden, v.patch, v.patch);
      nn::embedding(b, "position_embedding", v.positions, v.hidden);
      b.buffer("position_ids", {1, v.positions}, DType::kI64, false);
    }
  }
  encoder(b, p, v);
  nn::layer_norm(b, "post_layernorm", v.hidden);
  if (v.use_head) pooling_head(b, p, v);
}

void text_transformer(TreeBuilder& b, const std::string& p, const TextDims& t) {
  auto m = b.module("text_model", p + "TextTransformer");
  {
    auto e = b.module("embeddings", p + "TextEmbeddings");
    nn::embedding(b, "token_embedding", t.vocab, t.hidden);
    nn::embedding(b, "position_embedding", t.positions, t.hidden);
    b.buffer("position_ids", {1, t.positions}, DType::kI64, false);
  }
  encoder(b, p, t);
  nn::layer_norm(b, "final_layer_norm", t.hidden);
  nn::linear(b, "head", t.hidden, t.projection);
}

TensorTree build(const BuildRequest& r, bool v2) {
  const Config& c = r.config;
  const std::string p = v2 ? "Siglip2" : "Siglip";
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({p + "TextEmbeddings", p + "EncoderLayer", p + "VisionEmbeddings",
                  p + "MultiheadAttentionPoolingHead"});
  const bool model = r.class_name == p + "Model";
  if (model || r.class_name == p + "TextModel")
    text_transformer(b, p, read_text(part_config(c, "text_config")));
  if (model || r.class_name == p + "VisionModel")
    vision_transformer(b, p, read_vision(part_config(c, "vision_config"), v2), v2);
  if (model) {
    b.param("logit_scale", {1});
    b.param("logit_bias", {1});
  } else if (r.class_name != p + "TextModel" && r.class_name != p + "VisionModel") {
    throw Error(ErrorCode::kUnknownClass,
                fmt::format("class '{}' is not described for {}", r.class_name, v2 ? "siglip2" : "siglip"));
  }
  return b.finish();
}

// The dims from the same reads: the text tower's for the dual model and the text model (as CLIP's),
// the vision tower's for the vision model. Encoders: no KV cache, the dims size activations.
ModelDims model_dims(const BuildRequest& r, bool v2) {
  const std::string p = v2 ? "Siglip2" : "Siglip";
  if (r.class_name == p + "VisionModel") {
    const Config vc = part_config(r.config, "vision_config");
    const VisionDims v = read_vision(vc, v2);
    return uniform_model_dims(vc, {v.hidden, 0, v.layers, v.heads, v.heads, v.hidden / v.heads, v.inter,
                                   v.positions, false, read_norm_eps(vc, {"layer_norm_eps"}, 1e-6)});
  }
  const Config tc = part_config(r.config, "text_config");
  const TextDims t = read_text(tc);
  return uniform_model_dims(tc, {t.hidden, t.vocab, t.layers, t.heads, t.heads, t.hidden / t.heads, t.inter,
                                 t.positions, false, read_norm_eps(tc, {"layer_norm_eps"}, 1e-6)});
}

TensorTree build_dims(const BuildRequest& r, bool v2) {
  TensorTree t = build(r, v2);
  if (r.dims) *r.dims = model_dims(r, v2);
  return t;
}

TensorTree build_siglip(const BuildRequest& r) { return build_dims(r, false); }
TensorTree build_siglip2(const BuildRequest& r) { return build_dims(r, true); }

}  // namespace

const Family& siglip_family() {
  static const Family f{"transformers",
                        {"siglip"},
                        {{"SiglipModel", "AutoModel"},
                         {"SiglipTextModel", "AutoModel"},
                         {"SiglipVisionModel", "AutoModel"}},
                        &build_siglip};
  return f;
}

const Family& siglip2_family() {
  static const Family f{"transformers",
                        {"siglip2"},
                        {{"Siglip2Model", "AutoModel"},
                         {"Siglip2TextModel", "AutoModel"},
                         {"Siglip2VisionModel", "AutoModel"}},
                        &build_siglip2};
  return f;
}

}  // namespace memfit::arch
