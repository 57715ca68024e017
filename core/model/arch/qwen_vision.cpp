#include "qwen_vision.h"

#include <cmath>

#include <fmt/format.h>

namespace memfit::arch::vision {
namespace {

struct Names {
  const char* model;
  const char* patch_embed;
  const char* rotary;
  const char* block;
  const char* norm;  // "LayerNorm" (weight + bias) or an RMSNorm class (weight)
  const char* attn;
  const char* mlp;
  const char* merger;
};

Names names(Generation g) {
  switch (g) {
    case Generation::kQwen2Vl:
      return {"Qwen2VisionTransformerPretrainedModel", "PatchEmbed", "VisionRotaryEmbedding",
              "Qwen2VLVisionBlock", "LayerNorm", "VisionAttention", "VisionMlp", "PatchMerger"};
    case Generation::kQwen2_5Vl:
      return {"Qwen2_5_VisionTransformerPretrainedModel", "Qwen2_5_VisionPatchEmbed",
              "Qwen2_5_VisionRotaryEmbedding", "Qwen2_5_VLVisionBlock", "Qwen2_5_VLRMSNorm",
              "Qwen2_5_VLVisionAttention", "Qwen2_5_VLMLP", "Qwen2_5_VLPatchMerger"};
    case Generation::kErnie4_5Vl:
      return {"Ernie4_5_VLMoeVisionTransformerPretrainedModel", "Ernie4_5_VLMoePatchEmbed",
              "Ernie4_5_VLMoeVisionRotaryEmbedding", "Ernie4_5_VLMoeVisionBlock", "LayerNorm",
              "Ernie4_5_VLMoeVisionAttention", "Ernie4_5VLVisionMLP", ""};
    case Generation::kQwen3_5:
      break;
  }
  return {"Qwen3_5VisionModel", "Qwen3_5VisionPatchEmbed", "Qwen3_5VisionRotaryEmbedding",
          "Qwen3_5VisionBlock", "LayerNorm", "Qwen3_5VisionAttention", "Qwen3_5VisionMLP",
          "Qwen3_5VisionPatchMerger"};
}

void norm(TreeBuilder& b, std::string_view name, std::string_view cls, std::int64_t dim) {
  if (cls == "LayerNorm") nn::layer_norm(b, name, dim);
  else nn::rms_norm(b, name, dim, cls);
}

void block_mlp(TreeBuilder& b, const VisionDims& v, Generation g, const Names& n) {
  auto m = b.module("mlp", n.mlp);
  switch (g) {
    case Generation::kQwen2Vl:
    case Generation::kErnie4_5Vl:
      nn::linear(b, "fc1", v.width, v.inter);
      nn::activation(b, "act", v.act);
      nn::linear(b, "fc2", v.inter, v.width);
      return;
    case Generation::kQwen2_5Vl:
      nn::linear(b, "gate_proj", v.width, v.inter);
      nn::linear(b, "up_proj", v.width, v.inter);
      nn::linear(b, "down_proj", v.inter, v.width);
      nn::activation(b, "act_fn", v.act);
      return;
    case Generation::kQwen3_5:
      nn::linear(b, "linear_fc1", v.width, v.inter);
      nn::linear(b, "linear_fc2", v.inter, v.width);
      nn::activation(b, "act_fn", v.act);
      return;
  }
}

void merger(TreeBuilder& b, const VisionDims& v, Generation g, const Names& n) {
  const std::int64_t merged = v.width * v.merge * v.merge;
  auto m = b.module("merger", n.merger);
  if (g == Generation::kQwen3_5) {
    // use_postshuffle_norm=False: the norm runs over one patch, before the merge.
    nn::layer_norm(b, "norm", v.width);
    nn::linear(b, "linear_fc1", merged, merged);
    b.stateless("act_fn", "GELU");
    nn::linear(b, "linear_fc2", merged, v.out_hidden);
    return;
  }
  norm(b, "ln_q", n.norm, v.width);
  auto mlp = b.module("mlp", "Sequential");
  nn::linear(b, "0", merged, merged);
  b.stateless("1", "GELU");
  nn::linear(b, "2", merged, v.out_hidden);
}

}  // namespace

VisionDims read_vision(const Config& c, Generation g) {
  VisionDims v;
  v.depth = c.repeats_or({"depth"}, g == Generation::kQwen3_5 ? 27 : 32);
  v.heads = c.dim_or({"num_heads"}, 16);
  v.in_channels = c.dim_or({"in_channels", "in_chans"}, 3);
  v.patch = c.dim_or({"patch_size", "spatial_patch_size"}, g == Generation::kQwen3_5 ? 16 : 14);
  v.temporal_patch = c.dim_or({"temporal_patch_size"}, 2);
  v.merge = c.dim_or({"spatial_merge_size"}, 2);
  switch (g) {
    case Generation::kQwen2Vl: {
      // Qwen2VLVisionConfig: the tower's width is embed_dim; hidden_size is the merger's output.
      v.width = c.dim_or({"embed_dim"}, 1280);
      v.out_hidden = c.dim_or({"hidden_size"}, 3584);
      const double ratio = c.number_or({"mlp_ratio"}, 4.0);
      if (!(std::isfinite(ratio) && ratio > 0))
        throw Error(ErrorCode::kInvalidValue,
                    fmt::format("{}: 'mlp_ratio' must be a positive number, got {}", c.where(), ratio));
      v.inter = static_cast<std::int64_t>(static_cast<double>(v.width) * ratio);  // int(embed_dim * mlp_ratio)
      v.act = c.string_or({"hidden_act"}, "quick_gelu");
      break;
    }
    case Generation::kQwen2_5Vl:
      v.width = c.dim_or({"hidden_size"}, 3584);
      v.inter = c.dim_or({"intermediate_size"}, 3420);
      v.out_hidden = c.dim_or({"out_hidden_size"}, 3584);
      v.act = c.string_or({"hidden_act"}, "silu");
      break;
    case Generation::kErnie4_5Vl:
      // Ernie4_5_VLMoeVisionConfig: hidden_size is the tower's width, as in Qwen2.5-VL.
      v.width = c.dim_or({"hidden_size"}, 1280);
      v.inter = c.dim_or({"intermediate_size"}, 4 * 1280);
      v.act = c.string_or({"hidden_act"}, "quick_gelu");
      break;
    case Generation::kQwen3_5:
      v.width = c.dim_or({"hidden_size"}, 1152);
      v.inter = c.dim_or({"intermediate_size"}, 4304);
      v.out_hidden = c.dim_or({"out_hidden_size"}, 3584);
      v.positions = c.dim_or({"num_position_embeddings"}, 2304);
      v.act = c.string_or({"hidden_act"}, "gelu_pytorch_tanh");
      break;
  }
  require_divisible(c, v.width, g == Generation::kQwen2Vl ? "embed_dim" : "hidden_size", v.heads,
                    "num_heads");
  return v;
}

void vision_tower(TreeBuilder& b, std::string_view name, const VisionDims& v, Generation g) {
  const Names n = names(g);
  auto tower = b.module(name, n.model);
  if (g == Generation::kErnie4_5Vl) {
    auto pe = b.module("patch_embed", n.patch_embed);
    nn::linear(b, "proj", v.in_channels * v.patch * v.patch, v.width, false);
  } else {
    auto pe = b.module("patch_embed", n.patch_embed);
    auto proj = b.module("proj", "Conv3d");
    b.param("weight", {v.width, v.in_channels, v.temporal_patch, v.patch, v.patch});
    if (g == Generation::kQwen3_5) b.param("bias", {v.width});
  }
  if (g == Generation::kQwen3_5) nn::embedding(b, "pos_embed", v.positions, v.width);
  {
    // VisionRotaryEmbedding(head_dim // 2): inv_freq = 1/θ^(arange(0, dim, 2)/dim).
    const std::int64_t dim = v.width / v.heads / 2;
    auto rot = b.module("rotary_pos_emb", n.rotary);
    b.buffer("inv_freq", {(dim + 1) / 2}, DType::kF32, false);
  }
  {
    auto blocks = b.module("blocks", "ModuleList");
    for (std::int64_t i = 0; i < v.depth; ++i) {
      auto blk = b.item(i, n.block);
      norm(b, "norm1", n.norm, v.width);
      norm(b, "norm2", n.norm, v.width);
      {
        auto attn = b.module("attn", n.attn);
        nn::linear(b, "qkv", v.width, 3 * v.width);
        nn::linear(b, "proj", v.width, v.width);
      }
      block_mlp(b, v, g, n);
    }
  }
  if (g == Generation::kErnie4_5Vl) return nn::layer_norm(b, "ln", v.width);
  merger(b, v, g, n);
}

Config vision_config(const Config& top) {
  if (auto v = top.sub("vision_config")) return *v;
  return Config(Json::object(), top.where() + ": vision_config");
}

}  // namespace memfit::arch::vision
