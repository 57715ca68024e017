// CLIP (transformers models/clip/modeling_clip.py and configuration_clip.py, 4.40): CLIPModel,
// CLIPTextModel, CLIPVisionModel, CLIPTextModelWithProjection, CLIPVisionModelWithProjection,
// CLIPForImageClassification.
//
// _no_split_modules in 4.40 is set per class (CLIPPreTrainedModel has none): CLIPModel,
// CLIPTextModel and CLIPTextModelWithProjection ["CLIPTextEmbeddings", "CLIPEncoderLayer"];
// CLIPVisionModel ["CLIPEncoderLayer"]; CLIPVisionModelWithProjection and
// CLIPForImageClassification none. (Later versions add "CLIPVisionEmbeddings" to CLIPModel.)
// Modules without tensors follow v4.40.0's modeling_clip.py (huggingface/transformers tag
// v4.40.0, 745bbfe4), the same today: CLIPMLP's activation_fn (CLIPAttention's dropout is a
// float) and CLIPForImageClassification's nn.Identity classifier when num_labels is 0.
#include <fmt/format.h>

#include "common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct ClipTextDims {
  std::int64_t vocab, hidden, inter, layers, heads, positions, projection;
  std::string act;  // hidden_act: CLIPMLP.activation_fn
};

struct ClipVisionDims {
  std::int64_t hidden, inter, layers, heads, channels, patch, num_patches, projection;
  std::string act;
};

void check_heads(const Config& c, std::int64_t hidden, std::int64_t heads) {
  // CLIPAttention: "embed_dim must be divisible by num_heads".
  require_divisible(c, hidden, "hidden_size", heads, "num_attention_heads");
}

// CLIPTextConfig(): vocab_size=49408, hidden_size=512, intermediate_size=2048,
// projection_dim=512, num_hidden_layers=12, num_attention_heads=8, max_position_embeddings=77.
ClipTextDims text_dims(const Config& c) {
  ClipTextDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 49408);
  d.hidden = c.dim_or({"hidden_size"}, 512);
  d.inter = c.dim_or({"intermediate_size"}, 2048);
  d.layers = c.repeats_or({"num_hidden_layers"}, 12);
  d.heads = c.dim_or({"num_attention_heads"}, 8);
  d.positions = c.dim_or({"max_position_embeddings"}, 77);
  d.projection = c.dim_or({"projection_dim"}, 512);
  d.act = c.string_or({"hidden_act"}, "quick_gelu");
  check_heads(c, d.hidden, d.heads);
  return d;
}

// CLIPVisionConfig(): hidden_size=768, intermediate_size=3072, projection_dim=512,
// num_hidden_layers=12, num_attention_heads=12, num_channels=3, image_size=224, patch_size=32.
ClipVisionDims vision_dims(const Config& c) {
  ClipVisionDims d{};
  d.hidden = c.dim_or({"hidden_size"}, 768);
  d.inter = c.dim_or({"intermediate_size"}, 3072);
  d.layers = c.repeats_or({"num_hidden_layers"}, 12);
  d.heads = c.dim_or({"num_attention_heads"}, 12);
  d.channels = c.dim_or({"num_channels"}, 3);
  d.patch = c.dim_or({"patch_size"}, 32);
  const std::int64_t image = c.dim_or({"image_size"}, 224);
  d.num_patches = (image / d.patch) * (image / d.patch);
  d.projection = c.dim_or({"projection_dim"}, 512);
  d.act = c.string_or({"hidden_act"}, "quick_gelu");
  check_heads(c, d.hidden, d.heads);
  return d;
}

// The text or vision part of a "clip" config. CLIPConfig (CLIPModel, CLIPForImageClassification)
// lets a legacy `<part>_config_dict` override `<part>_config` entirely (it is turned into a full
// CLIPTextConfig/CLIPVisionConfig and update()s the other); CLIPTextConfig.from_pretrained on a
// "clip" config (the single-tower classes) reads `<part>_config` only. Absent: the defaults.
Config part(const Config& c, const std::string& name, bool composite) {
  if (composite)
    if (auto legacy = c.sub(name + "_dict")) return *legacy;
  if (auto sub = c.sub(name)) return *sub;
  return Config(Json::object(), fmt::format("{}: {}", c.where(), name));
}

// CLIPTextTransformer: embeddings, encoder, final_layer_norm.
void text_transformer(TreeBuilder& b, const ClipTextDims& d) {
  auto t = b.module("text_model", "CLIPTextTransformer");
  {
    auto e = b.module("embeddings", "CLIPTextEmbeddings");
    nn::embedding(b, "token_embedding", d.vocab, d.hidden);
    nn::embedding(b, "position_embedding", d.positions, d.hidden);
    // torch.arange(max_position_embeddings).expand((1, -1)), persistent=False (4.40 and today).
    b.buffer("position_ids", {1, d.positions}, DType::kI64, false);
  }
  clip_style_encoder(b, "CLIP", d.hidden, d.inter, d.layers, d.act);
  nn::layer_norm(b, "final_layer_norm", d.hidden);
}

// CLIPVisionTransformer: embeddings, pre_layrnorm (sic), encoder, post_layernorm.
void vision_transformer(TreeBuilder& b, const ClipVisionDims& d) {
  auto v = b.module("vision_model", "CLIPVisionTransformer");
  {
    auto e = b.module("embeddings", "CLIPVisionEmbeddings");
    b.param("class_embedding", {d.hidden});
    nn::conv2d(b, "patch_embedding", d.channels, d.hidden, d.patch, d.patch, false);
    nn::embedding(b, "position_embedding", d.num_patches + 1, d.hidden);
    b.buffer("position_ids", {1, d.num_patches + 1}, DType::kI64, false);
  }
  nn::layer_norm(b, "pre_layrnorm", d.hidden);
  clip_style_encoder(b, "CLIP", d.hidden, d.inter, d.layers, d.act);
  nn::layer_norm(b, "post_layernorm", d.hidden);
}

TensorTree tree(const BuildRequest& r) {
  const Config& c = r.config;
  TreeBuilder b{std::string(r.class_name)};
  if (is_class(r, "CLIPModel")) {
    const ClipTextDims t = text_dims(part(c, "text_config", true));
    const ClipVisionDims v = vision_dims(part(c, "vision_config", true));
    const std::int64_t projection = c.dim_or({"projection_dim"}, 512);
    b.set_no_split({"CLIPTextEmbeddings", "CLIPEncoderLayer"});
    text_transformer(b, t);
    vision_transformer(b, v);
    nn::linear(b, "visual_projection", v.hidden, projection, false);
    nn::linear(b, "text_projection", t.hidden, projection, false);
    b.param("logit_scale", {});  // nn.Parameter(torch.tensor(logit_scale_init_value))
  } else if (is_class(r, "CLIPTextModel") || is_class(r, "CLIPTextModelWithProjection")) {
    const ClipTextDims t = text_dims(part(c, "text_config", false));
    b.set_no_split({"CLIPTextEmbeddings", "CLIPEncoderLayer"});
    text_transformer(b, t);
    if (is_class(r, "CLIPTextModelWithProjection"))
      nn::linear(b, "text_projection", t.hidden, t.projection, false);
  } else if (is_class(r, "CLIPVisionModel") || is_class(r, "CLIPVisionModelWithProjection")) {
    const ClipVisionDims v = vision_dims(part(c, "vision_config", false));
    if (is_class(r, "CLIPVisionModel")) b.set_no_split({"CLIPEncoderLayer"});
    vision_transformer(b, v);
    if (is_class(r, "CLIPVisionModelWithProjection"))
      nn::linear(b, "visual_projection", v.hidden, v.projection, false);
  } else if (is_class(r, "CLIPForImageClassification")) {
    const ClipVisionDims v = vision_dims(part(c, "vision_config", true));
    vision_transformer(b, v);
    // Linear(vision hidden, num_labels) when num_labels > 0, else nn.Identity.
    const bool none = c.has("num_labels") && c.count({"num_labels"}) == 0;
    if (!none) nn::linear(b, "classifier", v.hidden, num_labels(c));
    else b.stateless("classifier", "Identity");
  } else {
    throw Error(ErrorCode::kUnknownClass,
                fmt::format("class '{}' is not described for clip", r.class_name));
  }
  return b.finish();
}


// The model's dims from the text tower's reads (family_dims.h), for every class: what the generic
// reader gave (it reads text_config); the vision classes' own tower is left for a change that may
// alter values. CLIPTextConfig (configuration_clip.py, 4.40): layer_norm_eps=1e-5.
ModelDims model_dims(const BuildRequest& r) {
  const bool composite = is_class(r, "CLIPModel") || is_class(r, "CLIPForImageClassification");
  const Config text = part(r.config, "text_config", composite);
  const ClipTextDims t = text_dims(text);
  const std::int64_t head_dim = t.hidden / t.heads;
  return uniform_model_dims(text, {t.hidden, t.vocab, t.layers, t.heads, t.heads, head_dim, t.inter,
                                   t.positions, text.flag_or({"tie_word_embeddings"}, true),
                                   read_norm_eps(text, {"layer_norm_eps"}, 1e-5)});
}

TensorTree build(const BuildRequest& r) {
  TensorTree t = tree(r);
  if (r.dims) *r.dims = model_dims(r);
  return t;
}
}  // namespace

const Family& clip_family() {
  // CLIPTextModel / CLIPVisionModel are what AutoModel builds for the clip_text_model /
  // clip_vision_model types; the *WithProjection classes have no Auto class.
  static const Family f{"transformers",
                        {"clip"},
                        {{"CLIPModel", "AutoModel"},
                         {"CLIPTextModel", "AutoModel"},
                         {"CLIPVisionModel", "AutoModel"},
                         {"CLIPTextModelWithProjection", ""},
                         {"CLIPVisionModelWithProjection", ""},
                         {"CLIPForImageClassification", "AutoModelForImageClassification"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
