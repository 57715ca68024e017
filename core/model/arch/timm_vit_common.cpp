#include "timm_vit_common.h"

#include <string>

#include <fmt/format.h>

namespace memfit::arch::timm {
namespace {

// Attention: qkv, q_norm, k_norm (nn.Identity: qk_norm=False), attn_drop, proj, proj_drop.
void attention(TreeBuilder& b, const VitArgs& a) {
  auto s = b.module("attn", "Attention");
  nn::linear(b, "qkv", a.dim, 3 * a.dim, a.qkv_bias);
  identity(b, "q_norm");
  identity(b, "k_norm");
  nn::dropout(b, "attn_drop");
  nn::linear(b, "proj", a.dim, a.dim);
  nn::dropout(b, "proj_drop");
}

void layer_scale(TreeBuilder& b, std::string_view name, std::int64_t dim) {
  auto s = b.module(name, "LayerScale");
  b.param("gamma", {dim});
}

// Mlp: fc1, act, drop1, norm (nn.Identity: no norm_layer), fc2, drop2; SwiGLUPacked (GluMlp,
// same children): fc1 to `hidden`, fc2 from hidden / 2.
void mlp(TreeBuilder& b, std::string_view name, std::int64_t dim, std::int64_t hidden,
         VitMlp kind, std::string_view act) {
  const bool glu = kind == VitMlp::kSwiGLUPacked;
  auto s = b.module(name, glu ? "GluMlp" : "Mlp");
  nn::linear(b, "fc1", dim, hidden);
  b.stateless("act", act);
  nn::dropout(b, "drop1");
  identity(b, "norm");
  nn::linear(b, "fc2", glu ? hidden / 2 : hidden, dim);
  nn::dropout(b, "drop2");
}

// Python's int(dim * mlp_ratio).
std::int64_t hidden_size(std::int64_t dim, double ratio) {
  return static_cast<std::int64_t>(static_cast<double>(dim) * ratio);
}

// Block: norm1, attn, ls1, drop_path1, norm2, mlp, ls2, drop_path2 (ls*: LayerScale or
// nn.Identity; drop_path*: nn.Identity, drop_path_rate 0).
void block(TreeBuilder& b, const VitArgs& a) {
  nn::layer_norm(b, "norm1", a.dim);
  attention(b, a);
  if (a.layer_scale) layer_scale(b, "ls1", a.dim);
  else identity(b, "ls1");
  identity(b, "drop_path1");
  nn::layer_norm(b, "norm2", a.dim);
  mlp(b, "mlp", a.dim, hidden_size(a.dim, a.mlp_ratio), a.mlp, a.act);
  if (a.layer_scale) layer_scale(b, "ls2", a.dim);
  else identity(b, "ls2");
  identity(b, "drop_path2");
}

// AttentionPoolLatent (global_pool='map'): latent, q, kv, q_norm, k_norm (nn.Identity), proj,
// proj_drop, norm, mlp (an Mlp with its default nn.GELU, whatever the blocks use).
void attention_pool(TreeBuilder& b, const VitArgs& a) {
  auto s = b.module("attn_pool", "AttentionPoolLatent");
  b.param("latent", {1, 1, a.dim});
  nn::linear(b, "q", a.dim, a.dim);
  nn::linear(b, "kv", a.dim, 2 * a.dim);
  identity(b, "q_norm");
  identity(b, "k_norm");
  nn::linear(b, "proj", a.dim, a.dim);
  nn::dropout(b, "proj_drop");
  nn::layer_norm(b, "norm", a.dim);
  mlp(b, "mlp", a.dim, hidden_size(a.dim, a.mlp_ratio), VitMlp::kMlp, "GELU");
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
    identity(b, "norm");  // no norm_layer given to PatchEmbed
  }
  if (a.class_token) b.param("cls_token", {1, 1, a.dim});
  if (a.reg_tokens) b.param("reg_token", {1, a.reg_tokens, a.dim});
  b.param("pos_embed", {1, embed_len, a.dim});
  // VisionTransformerDistilled registers dist_token after super().__init__(); re-assigning
  // pos_embed keeps its slot, so the root's parameters are cls_token, pos_embed, dist_token.
  if (a.distilled) b.param("dist_token", {1, 1, a.dim});
  nn::dropout(b, "pos_drop");
  identity(b, "patch_drop");  // patch_drop_rate 0
  if (a.pre_norm) nn::layer_norm(b, "norm_pre", a.dim);
  else identity(b, "norm_pre");
  {
    auto blocks = b.module("blocks", "Sequential");
    for (std::int64_t i = 0; i < a.depth; ++i) {
      auto blk = b.item(i, "Block");
      block(b, a);
    }
  }
  if (!use_fc_norm) nn::layer_norm(b, "norm", a.dim);
  else identity(b, "norm");
  if (a.global_pool == "map") attention_pool(b, a);  // else attn_pool = None: not a child
  if (use_fc_norm) nn::layer_norm(b, "fc_norm", a.dim);
  else identity(b, "fc_norm");
  nn::dropout(b, "head_drop");
  classifier(b, "head", a.dim, classes);  // Linear, or nn.Identity when num_classes is 0
  // VisionTransformerDistilled registers head_dist after super().__init__().
  if (a.distilled) classifier(b, "head_dist", a.dim, classes);
  return b.finish();
}

}  // namespace memfit::arch::timm
