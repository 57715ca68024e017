// DINOv2 (transformers models/dinov2/modeling_dinov2.py, 4.40): Dinov2Model and
// Dinov2ForImageClassification. ViT-shaped with its own parts: pre-norm layers (norm1, norm2), a
// learned per-channel scale after attention and after the MLP (layer_scale*.lambda1), a
// mask_token of [1, hidden] in the embeddings, and the MLP either fc1/fc2 (mlp_ratio × hidden)
// or, with use_swiglu_ffn, a SwiGLU of weights_in / weights_out (the giant checkpoint). The
// classifier reads the CLS token and the mean of the patch tokens: 2 × hidden inputs.
// Dinov2PreTrainedModel._no_split_modules = ["Dinov2SwiGLUFFN"]. No buffers.
// DINOv2 with registers (models/dinov2_with_registers, first in 4.48; read on main): the same
// modules under Dinov2WithRegisters* names, num_register_tokens (4) learned tokens in the
// embeddings, the base under `dinov2_with_registers`.
#include <cmath>

#include <fmt/format.h>

#include "common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

// What differs between DINOv2 and DINOv2 with registers.
struct Flavor {
  std::string_view prefix;  // class names: "Dinov2" or "Dinov2WithRegisters"
  std::string_view base;    // the base model's attribute in the classification head
  bool registers;
};
constexpr Flavor kDinov2{"Dinov2", "dinov2", false};
constexpr Flavor kWithRegisters{"Dinov2WithRegisters", "dinov2_with_registers", true};

std::string cls(const Flavor& f, std::string_view suffix) { return fmt::format("{}{}", f.prefix, suffix); }

struct Dims {
  Flavor flavor;
  std::int64_t registers;
  std::int64_t hidden, layers, heads, head_size, channels, patch, num_patches, mlp_hidden, swiglu_hidden;
  bool qkv_bias, swiglu, drop_path;
  std::string act;
};

// Dinov2Config(): hidden_size=768, 12 layers, 12 heads, mlp_ratio=4, hidden_act="gelu",
// image_size=224, patch_size=16, num_channels=3, qkv_bias=True, drop_path_rate=0.0,
// use_swiglu_ffn=False, layer_norm_eps=1e-6.
Dims read(const Config& c, const Flavor& f) {
  Dims d{};
  d.flavor = f;
  d.registers = f.registers ? c.count_or({"num_register_tokens"}, 4) : 0;
  d.hidden = c.dim_or({"hidden_size"}, 768);
  d.layers = c.repeats_or({"num_hidden_layers"}, 12);
  d.heads = c.dim_or({"num_attention_heads"}, 12);
  require_divisible(c, d.hidden, "hidden_size", d.heads, "num_attention_heads");
  d.head_size = d.hidden / d.heads;
  d.channels = c.dim_or({"num_channels"}, 3);
  d.patch = c.dim_or({"patch_size"}, 16);
  const std::int64_t image = c.dim_or({"image_size"}, 224);
  d.num_patches = (image / d.patch) * (image / d.patch);  // Dinov2PatchEmbeddings
  if (d.num_patches < 1)
    throw Error(ErrorCode::kInvalidValue, fmt::format("{}: 'patch_size' is larger than 'image_size'", c.where()));
  const double ratio = c.number_or({"mlp_ratio"}, 4.0);
  if (!(ratio > 0) || ratio > 1024)
    throw Error(ErrorCode::kInvalidValue, fmt::format("{}: 'mlp_ratio' must be positive, got {}", c.where(), ratio));
  // int(hidden_size * mlp_ratio); the SwiGLU rounds two thirds of it up to a multiple of 8.
  d.mlp_hidden = static_cast<std::int64_t>(static_cast<double>(d.hidden) * ratio);
  d.swiglu_hidden = (static_cast<std::int64_t>(static_cast<double>(d.mlp_hidden) * 2 / 3) + 7) / 8 * 8;
  d.qkv_bias = c.flag_or({"qkv_bias"}, true);
  d.swiglu = c.flag_or({"use_swiglu_ffn"}, false);
  d.drop_path = c.number_or({"drop_path_rate"}, 0.0) > 0;
  d.act = c.string_or({"hidden_act"}, "gelu");
  return d;
}

void layer(TreeBuilder& b, const Dims& d) {
  const Flavor& f = d.flavor;
  nn::layer_norm(b, "norm1", d.hidden);
  {
    auto a = b.module("attention", cls(f, "Attention"));
    {
      auto s = b.module("attention", cls(f, "SelfAttention"));
      nn::linear(b, "query", d.hidden, d.hidden, d.qkv_bias);
      nn::linear(b, "key", d.hidden, d.hidden, d.qkv_bias);
      nn::linear(b, "value", d.hidden, d.hidden, d.qkv_bias);
      // A module in 4.40; today's self-attention keeps the probability as a float (as ViT's).
      nn::dropout(b, "dropout", BufferEra::kLegacyOnly);
    }
    auto o = b.module("output", cls(f, "SelfOutput"));
    nn::linear(b, "dense", d.hidden, d.hidden);
    nn::dropout(b, "dropout");
  }
  {
    auto s = b.module("layer_scale1", cls(f, "LayerScale"));
    b.param("lambda1", {d.hidden});
  }
  if (d.drop_path) b.stateless("drop_path", cls(f, "DropPath"));
  else b.stateless("drop_path", "Identity");
  nn::layer_norm(b, "norm2", d.hidden);
  if (d.swiglu) {
    auto m = b.module("mlp", cls(f, "SwiGLUFFN"));
    nn::linear(b, "weights_in", d.hidden, 2 * d.swiglu_hidden);
    nn::linear(b, "weights_out", d.swiglu_hidden, d.hidden);
  } else {
    auto m = b.module("mlp", cls(f, "MLP"));
    nn::linear(b, "fc1", d.hidden, d.mlp_hidden);
    nn::activation(b, "activation", d.act);
    nn::linear(b, "fc2", d.mlp_hidden, d.hidden);
  }
  auto s = b.module("layer_scale2", cls(f, "LayerScale"));
  b.param("lambda1", {d.hidden});
}

void model(TreeBuilder& b, const Dims& d) {
  const Flavor& f = d.flavor;
  {
    auto e = b.module("embeddings", cls(f, "Embeddings"));
    b.param("cls_token", {1, 1, d.hidden});
    b.param("mask_token", {1, d.hidden});
    if (f.registers) b.param("register_tokens", {1, d.registers, d.hidden});
    {
      auto p = b.module("patch_embeddings", cls(f, "PatchEmbeddings"));
      nn::conv2d(b, "projection", d.channels, d.hidden, d.patch, d.patch);
    }
    b.param("position_embeddings", {1, d.num_patches + 1, d.hidden});
    nn::dropout(b, "dropout");
  }
  {
    auto enc = b.module("encoder", cls(f, "Encoder"));
    auto list = b.module("layer", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto l = b.item(i, cls(f, "Layer"));
      layer(b, d);
    }
  }
  nn::layer_norm(b, "layernorm", d.hidden);
}

TensorTree tree(const BuildRequest& r, const Dims& d) {
  const Flavor& f = d.flavor;
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({cls(f, "SwiGLUFFN")});
  if (is_class(r, cls(f, "Model"))) {
    model(b, d);
  } else if (is_class(r, cls(f, "ForImageClassification"))) {
    {
      auto m = b.module(f.base, cls(f, "Model"));
      model(b, d);
    }
    // Linear(2 · hidden, num_labels) when num_labels > 0, else nn.Identity.
    const bool none = r.config.has("num_labels") && r.config.count({"num_labels"}) == 0;
    if (!none) nn::linear(b, "classifier", 2 * d.hidden, num_labels(r.config));
    else b.stateless("classifier", "Identity");
  } else {
    throw Error(ErrorCode::kUnknownClass, fmt::format("class '{}' is not described for this model", r.class_name));
  }
  return b.finish();
}

// No vocabulary and no maximum length (the patches set the sequence).
ModelDims dims(const Config& c, const Dims& d) {
  return uniform_model_dims(c, {d.hidden, 0, d.layers, d.heads, d.heads, d.head_size,
                                d.swiglu ? d.swiglu_hidden : d.mlp_hidden, 0, c.flag_or({"tie_word_embeddings"}, true),
                                read_norm_eps(c, {"layer_norm_eps"}, 1e-6)});
}

TensorTree build_dinov2(const BuildRequest& r) { return build_with_dims(r, read(r.config, kDinov2), tree, dims); }
TensorTree build_with_registers(const BuildRequest& r) {
  return build_with_dims(r, read(r.config, kWithRegisters), tree, dims);
}

}  // namespace

const Family& dinov2_family() {
  static const Family f{"transformers",
                        {"dinov2"},
                        {{"Dinov2Model", "AutoModel"},
                         {"Dinov2ForImageClassification", "AutoModelForImageClassification"}},
                        &build_dinov2};
  return f;
}

const Family& dinov2_with_registers_family() {
  static const Family f{"transformers",
                        {"dinov2_with_registers"},
                        {{"Dinov2WithRegistersModel", "AutoModel"},
                         {"Dinov2WithRegistersForImageClassification", "AutoModelForImageClassification"}},
                        &build_with_registers};
  return f;
}

}  // namespace memfit::arch
