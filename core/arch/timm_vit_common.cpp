#include "timm_vit_common.h"

#include <string>

#include <fmt/format.h>

namespace memfit::arch::timm {
namespace {

// timm.layers.Attention: qkv, (q_norm, k_norm: Identity), proj.
void attention(TreeBuilder& b, const VitArgs& a) {
  auto s = b.module("attn", "Attention");
  nn::linear(b, "qkv", a.dim, 3 * a.dim, a.qkv_bias);
  nn::linear(b, "proj", a.dim, a.dim);
}

void layer_scale(TreeBuilder& b, std::string_view name, std::int64_t dim) {
  auto s = b.module(name, "LayerScale");
  b.param("gamma", {dim});
}

// Mlp: fc1 → act → fc2; SwiGLUPacked (GluMlp): fc1 to `hidden`, fc2 from hidden / 2.
void mlp(TreeBuilder& b, std::string_view name, std::int64_t dim, std::int64_t hidden,
         VitMlp kind) {
  if (kind == VitMlp::kSwiGLUPacked) {
    auto s = b.module(name, "GluMlp");
    nn::linear(b, "fc1", dim, hidden);
    nn::linear(b, "fc2", hidden / 2, dim);
    return;
  }
  auto s = b.module(name, "Mlp");
  nn::linear(b, "fc1", dim, hidden);
  nn::linear(b, "fc2", hidden, dim);
}

// Python's int(dim * mlp_ratio).
std::int64_t hidden_size(std::int64_t dim, double ratio) {
  return static_cast<std::int64_t>(static_cast<double>(dim) * ratio);
}

// Block: norm1, attn, ls1, norm2, mlp, ls2 (DropPath modules have no tensors).
void block(TreeBuilder& b, const VitArgs& a) {
  nn::layer_norm(b, "norm1", a.dim);
  attention(b, a);
  if (a.layer_scale) layer_scale(b, "ls1", a.dim);
  nn::layer_norm(b, "norm2", a.dim);
  mlp(b, "mlp", a.dim, hidden_size(a.dim, a.mlp_ratio), a.mlp);
  if (a.layer_scale) layer_scale(b, "ls2", a.dim);
}

// AttentionPoolLatent (global_pool='map'): latent, q, kv, proj, norm, mlp.
void attention_pool(TreeBuilder& b, const VitArgs& a) {
  auto s = b.module("attn_pool", "AttentionPoolLatent");
  b.param("latent", {1, 1, a.dim});
  nn::linear(b, "q", a.dim, a.dim);
  nn::linear(b, "kv", a.dim, 2 * a.dim);
  nn::linear(b, "proj", a.dim, a.dim);
  nn::layer_norm(b, "norm", a.dim);
  mlp(b, "mlp", a.dim, hidden_size(a.dim, a.mlp_ratio), VitMlp::kMlp);
}

}  // namespace

TensorTree build_vit(const BuildRequest& r, const VitArgs& a) {
  // Tags without a dataset token (dinov2 "lvd142m", siglip "webli") keep the arch's default.
  const std::int64_t classes = num_classes(r, a.headless ? 0 : 1000);
  const std::int64_t img = input_size(r.config).value_or(a.img);
  if (img < a.patch)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: input size {} is smaller than the patch size {} of {}",
                            r.config.where(), img, a.patch, a.name));
  const std::int64_t grid = img / a.patch;  // PatchEmbed: img_size // patch_size per side
  const std::int64_t num_patches = grid * grid;
  const std::int64_t prefix = (a.class_token ? 1 : 0) + a.reg_tokens + (a.distilled ? 1 : 0);
  const std::int64_t embed_len = a.no_embed_class ? num_patches : num_patches + prefix;
  const bool use_fc_norm = a.fc_norm.value_or(a.global_pool == "avg");

  TreeBuilder b{a.distilled ? "VisionTransformerDistilled" : "VisionTransformer"};
  {
    auto pe = b.module("patch_embed", "PatchEmbed");
    nn::conv2d(b, "proj", 3, a.dim, a.patch, a.patch, !a.pre_norm);
  }
  if (a.class_token) b.param("cls_token", {1, 1, a.dim});
  if (a.reg_tokens) b.param("reg_token", {1, a.reg_tokens, a.dim});
  b.param("pos_embed", {1, embed_len, a.dim});
  // VisionTransformerDistilled registers dist_token after super().__init__(); re-assigning
  // pos_embed keeps its slot, so the root's parameters are cls_token, pos_embed, dist_token.
  if (a.distilled) b.param("dist_token", {1, 1, a.dim});
  if (a.pre_norm) nn::layer_norm(b, "norm_pre", a.dim);
  {
    auto blocks = b.module("blocks", "Sequential");
    for (std::int64_t i = 0; i < a.depth; ++i) {
      auto blk = b.module(std::to_string(i), "Block");
      block(b, a);
    }
  }
  if (!use_fc_norm) nn::layer_norm(b, "norm", a.dim);
  if (a.global_pool == "map") attention_pool(b, a);
  if (use_fc_norm) nn::layer_norm(b, "fc_norm", a.dim);
  classifier(b, "head", a.dim, classes);
  if (a.distilled) classifier(b, "head_dist", a.dim, classes);
  return b.finish();
}

}  // namespace memfit::arch::timm
