// ViT (transformers models/vit/modeling_vit.py, 4.40): ViTModel, ViTForImageClassification,
// ViTForMaskedImageModeling. ViTPreTrainedModel._no_split_modules = ["ViTEmbeddings",
// "ViTLayer"]. ViT registers no buffers.
// Modules without tensors follow v4.40.0's modeling_vit.py (huggingface/transformers tag v4.40.0,
// 745bbfe4); today's ViTSelfAttention no longer registers its dropout.
#include <utility>

#include <fmt/format.h>

#include "common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct ViTDims {
  std::int64_t hidden, layers, heads, head_size, inter, channels, patch_h, patch_w, num_patches,
      encoder_stride;
  bool qkv_bias;
  std::string act;  // hidden_act: ViTIntermediate.intermediate_act_fn
};

// image_size / patch_size: an int, or an [height, width] pair (ViTPatchEmbeddings accepts any
// iterable).
std::pair<std::int64_t, std::int64_t> size_pair(const Config& c, const char* key,
                                                std::int64_t fallback) {
  auto it = c.json().find(key);
  if (it != c.json().end() && it->is_array()) {
    auto v = *c.int_list({key});
    if (v.size() != 2 || v[0] < 1 || v[1] < 1)
      throw Error(ErrorCode::kInvalidValue,
                  fmt::format("{}: '{}' must be an integer or a list of two positive integers",
                              c.where(), key));
    return {v[0], v[1]};
  }
  const std::int64_t s = c.dim_or({key}, fallback);
  return {s, s};
}

// ViTConfig(): hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
// intermediate_size=3072, image_size=224, patch_size=16, num_channels=3, qkv_bias=True,
// encoder_stride=16.
ViTDims read_dims(const Config& c) {
  ViTDims d{};
  d.hidden = c.dim_or({"hidden_size"}, 768);
  d.layers = c.repeats_or({"num_hidden_layers"}, 12);
  d.heads = c.dim_or({"num_attention_heads"}, 12);
  d.inter = c.dim_or({"intermediate_size"}, 3072);
  d.channels = c.dim_or({"num_channels"}, 3);
  d.qkv_bias = c.flag_or({"qkv_bias"}, true);
  d.encoder_stride = c.dim_or({"encoder_stride"}, 16);
  d.act = c.string_or({"hidden_act"}, "gelu");
  // ViTSelfAttention: the heads must divide hidden_size unless the config has embedding_size.
  if (!c.has("embedding_size"))
    require_divisible(c, d.hidden, "hidden_size", d.heads, "num_attention_heads");
  d.head_size = d.hidden / d.heads;
  if (d.head_size < 1)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'num_attention_heads' ({}) exceeds 'hidden_size' ({})",
                            c.where(), d.heads, d.hidden));
  const auto image = size_pair(c, "image_size", 224);
  const auto patch = size_pair(c, "patch_size", 16);
  d.patch_h = patch.first;
  d.patch_w = patch.second;
  d.num_patches = (image.second / patch.second) * (image.first / patch.first);
  if (d.num_patches < 1)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'patch_size' is larger than 'image_size'", c.where()));
  return d;
}

void model(TreeBuilder& b, const ViTDims& d, bool pooling, bool mask_token) {
  {
    // ViTEmbeddings: cls_token, mask_token (ViTForMaskedImageModeling only), patch_embeddings,
    // position_embeddings [1, num_patches + 1, hidden].
    auto e = b.module("embeddings", "ViTEmbeddings");
    b.param("cls_token", {1, 1, d.hidden});
    if (mask_token) b.param("mask_token", {1, 1, d.hidden});
    {
      auto p = b.module("patch_embeddings", "ViTPatchEmbeddings");
      // Conv2d(num_channels, hidden, kernel_size=patch_size, stride=patch_size)
      nn::conv2d(b, "projection", d.channels, d.hidden, d.patch_h, d.patch_w);
    }
    b.param("position_embeddings", {1, d.num_patches + 1, d.hidden});
    nn::dropout(b, "dropout");
  }
  {
    auto enc = b.module("encoder", "ViTEncoder");
    auto list = b.module("layer", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto l = b.item(i, "ViTLayer");
      {
        auto a = b.module("attention", "ViTAttention");
        {
          auto s = b.module("attention", "ViTSelfAttention");
          const std::int64_t all_head = d.heads * d.head_size;
          nn::linear(b, "query", d.hidden, all_head, d.qkv_bias);
          nn::linear(b, "key", d.hidden, all_head, d.qkv_bias);
          nn::linear(b, "value", d.hidden, all_head, d.qkv_bias);
          nn::dropout(b, "dropout", BufferEra::kLegacyOnly);
        }
        auto o = b.module("output", "ViTSelfOutput");
        nn::linear(b, "dense", d.hidden, d.hidden);
        nn::dropout(b, "dropout");
      }
      {
        auto m = b.module("intermediate", "ViTIntermediate");
        nn::linear(b, "dense", d.hidden, d.inter);
        nn::activation(b, "intermediate_act_fn", d.act);
      }
      {
        auto o = b.module("output", "ViTOutput");
        nn::linear(b, "dense", d.inter, d.hidden);
        nn::dropout(b, "dropout");
      }
      nn::layer_norm(b, "layernorm_before", d.hidden);
      nn::layer_norm(b, "layernorm_after", d.hidden);
    }
  }
  nn::layer_norm(b, "layernorm", d.hidden);
  if (pooling) {
    auto p = b.module("pooler", "ViTPooler");
    nn::linear(b, "dense", d.hidden, d.hidden);
    // nn.Tanh() in 4.40; ACT2FN[pooler_act] (default "tanh", the same class) today.
    b.stateless("activation", "Tanh");
  }
}

TensorTree tree(const BuildRequest& r, const ViTDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"ViTEmbeddings", "ViTLayer"});
  if (is_class(r, "ViTModel")) {
    model(b, d, true, false);
  } else if (is_class(r, "ViTForImageClassification")) {
    {
      auto m = b.module("vit", "ViTModel");
      model(b, d, false, false);
    }
    // Linear(hidden, num_labels) when num_labels > 0, else nn.Identity (no tensors).
    const bool none = r.config.has("num_labels") && r.config.count({"num_labels"}) == 0;
    if (!none) nn::linear(b, "classifier", d.hidden, num_labels(r.config));
    else b.stateless("classifier", "Identity");
  } else if (is_class(r, "ViTForMaskedImageModeling")) {
    {
      auto m = b.module("vit", "ViTModel");
      model(b, d, false, true);
    }
    // Sequential(Conv2d(hidden, encoder_stride**2 * num_channels, kernel_size=1), PixelShuffle)
    auto s = b.module("decoder", "Sequential");
    nn::conv2d(b, "0", d.hidden, d.encoder_stride * d.encoder_stride * d.channels, 1, 1);
    b.stateless("1", "PixelShuffle");
  } else {
    throw Error(ErrorCode::kUnknownClass,
                fmt::format("class '{}' is not described for vit", r.class_name));
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h): no vocabulary and no maximum length (the
// patches set the sequence), tie_word_embeddings as PretrainedConfig defaults it. ViTConfig
// (configuration_vit.py, 4.40): layer_norm_eps=1e-12.
ModelDims model_dims(const Config& c, const ViTDims& d) {
  return uniform_model_dims(c, {d.hidden, 0, d.layers, d.heads, d.heads, d.head_size, d.inter, 0,
                                c.flag_or({"tie_word_embeddings"}, true),
                                read_norm_eps(c, {"layer_norm_eps"}, 1e-12)});
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& vit_family() {
  static const Family f{
      "transformers",
      {"vit"},
      {{"ViTModel", "AutoModel"},
       {"ViTForImageClassification", "AutoModelForImageClassification"},
       {"ViTForMaskedImageModeling", "AutoModelForMaskedImageModeling"}},
      &build};
  return f;
}

}  // namespace memfit::arch
