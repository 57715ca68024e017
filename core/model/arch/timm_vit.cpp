// timm VisionTransformer entry points (timm/models/vision_transformer.py): the original ViTs,
// the gap / CLIP / DINOv2 / SigLIP / register variants. The builder is timm_vit_common.cpp.
// The Mlp activation of each entry point (nn.GELU; act_layer='quick_gelu' → QuickGELU for the
// *_clip_quickgelu_* models, nn.SiLU for the giant DINOv2) follows timm 1.0.3
// vision_transformer.py (huggingface/pytorch-image-models @ v1.0.3, cb0e4391).
#include <string>
#include <string_view>
#include <vector>

#include "families.h"
#include "timm_vit_common.h"

namespace memfit::arch {
namespace {

using timm::VitArgs;
using timm::VitMlp;

VitArgs plain(std::string_view name, std::int64_t patch, std::int64_t dim, std::int64_t depth,
              std::int64_t heads, std::int64_t img, double mlp_ratio = 4.0) {
  VitArgs a;
  a.name = name;
  a.patch = patch;
  a.dim = dim;
  a.depth = depth;
  a.heads = heads;
  a.img = img;
  a.mlp_ratio = mlp_ratio;
  return a;
}

// pre_norm=True, norm eps 1e-5: the CLIP image towers.
VitArgs clip(std::string_view name, std::int64_t patch, std::int64_t dim, std::int64_t depth,
             std::int64_t heads, std::int64_t img, double mlp_ratio = 4.0) {
  VitArgs a = plain(name, patch, dim, depth, heads, img, mlp_ratio);
  a.pre_norm = true;
  return a;
}

// class_token=False, global_pool='avg', fc_norm=False.
VitArgs gap(VitArgs a) {
  a.class_token = false;
  a.global_pool = "avg";
  a.fc_norm = false;
  return a;
}

// DINOv2: init_values=1e-5, default pretrained_cfg input 518, no classifier in the weights.
VitArgs dinov2(std::string_view name, std::int64_t dim, std::int64_t depth, std::int64_t heads,
               bool reg4, bool giant = false) {
  VitArgs a = plain(name, 14, dim, depth, heads, 518, giant ? 2.66667 * 2 : 4.0);
  a.layer_scale = true;
  a.headless = true;
  if (giant) {
    a.mlp = VitMlp::kSwiGLUPacked;
    a.act = "SiLU";  // mlp_layer=SwiGLUPacked, act_layer=nn.SiLU
  }
  if (reg4) {
    a.reg_tokens = 4;
    a.no_embed_class = true;
  }
  return a;
}

// SigLIP image towers: class_token=False, global_pool='map' (attention pool), headless weights.
VitArgs siglip(std::string_view name, std::int64_t patch, std::int64_t dim, std::int64_t depth,
               std::int64_t heads, std::int64_t img, double mlp_ratio = 4.0) {
  VitArgs a = plain(name, patch, dim, depth, heads, img, mlp_ratio);
  a.class_token = false;
  a.global_pool = "map";
  a.headless = true;
  return a;
}

// Medium / betwixt gap models: no class token, avg pool, qkv_bias=False, LayerScale, fc_norm off.
VitArgs gap_ls(std::string_view name, std::int64_t dim, std::int64_t heads, std::int64_t img) {
  VitArgs a = gap(plain(name, 16, dim, 12, heads, img));
  a.qkv_bias = false;
  a.layer_scale = true;
  return a;
}

// "reg" gap models: no class token, registers without pos embed, avg pool with fc_norm.
VitArgs reg_gap(std::string_view name, std::int64_t dim, std::int64_t depth, std::int64_t heads,
                std::int64_t reg, double mlp_ratio, std::int64_t img) {
  VitArgs a = plain(name, 16, dim, depth, heads, img, mlp_ratio);
  a.class_token = false;
  a.no_embed_class = true;
  a.reg_tokens = reg;
  a.global_pool = "avg";
  a.layer_scale = true;
  return a;
}

const std::vector<VitArgs>& variants() {
  static const std::vector<VitArgs> v = [] {
    std::vector<VitArgs> out = {
        plain("vit_tiny_patch16_224", 16, 192, 12, 3, 224),
        plain("vit_tiny_patch16_384", 16, 192, 12, 3, 384),
        plain("vit_small_patch32_224", 32, 384, 12, 6, 224),
        plain("vit_small_patch32_384", 32, 384, 12, 6, 384),
        plain("vit_small_patch16_224", 16, 384, 12, 6, 224),
        plain("vit_small_patch16_384", 16, 384, 12, 6, 384),
        plain("vit_small_patch8_224", 8, 384, 12, 6, 224),
        plain("vit_base_patch32_224", 32, 768, 12, 12, 224),
        plain("vit_base_patch32_384", 32, 768, 12, 12, 384),
        plain("vit_base_patch16_224", 16, 768, 12, 12, 224),
        plain("vit_base_patch16_384", 16, 768, 12, 12, 384),
        plain("vit_base_patch8_224", 8, 768, 12, 12, 224),
        plain("vit_large_patch32_224", 32, 1024, 24, 16, 224),
        plain("vit_large_patch32_384", 32, 1024, 24, 16, 384),
        plain("vit_large_patch16_224", 16, 1024, 24, 16, 224),
        plain("vit_large_patch16_384", 16, 1024, 24, 16, 384),
        plain("vit_large_patch14_224", 14, 1024, 24, 16, 224),
        plain("vit_huge_patch14_224", 14, 1280, 32, 16, 224),
        plain("vit_giant_patch14_224", 14, 1408, 40, 16, 224, 48.0 / 11.0),
        plain("vit_gigantic_patch14_224", 14, 1664, 48, 16, 224, 64.0 / 13.0),
        gap_ls("vit_medium_patch16_gap_240", 512, 8, 240),
        gap_ls("vit_medium_patch16_gap_256", 512, 8, 256),
        gap_ls("vit_medium_patch16_gap_384", 512, 8, 384),
        gap_ls("vit_betwixt_patch16_gap_256", 640, 10, 256),
        gap(plain("vit_base_patch16_gap_224", 16, 768, 12, 16, 224)),
        gap(plain("vit_huge_patch14_gap_224", 14, 1280, 32, 16, 224)),
        gap(plain("vit_huge_patch16_gap_448", 16, 1280, 32, 16, 448)),
        gap(plain("vit_giant_patch16_gap_224", 16, 1408, 40, 16, 224, 48.0 / 11.0)),
        clip("vit_xsmall_patch16_clip_224", 16, 256, 10, 4, 224),
        clip("vit_medium_patch32_clip_224", 32, 512, 12, 8, 224),
        clip("vit_medium_patch16_clip_224", 16, 512, 12, 8, 224),
        clip("vit_betwixt_patch32_clip_224", 32, 640, 12, 10, 224),
        clip("vit_base_patch32_clip_224", 32, 768, 12, 12, 224),
        clip("vit_base_patch32_clip_256", 32, 768, 12, 12, 256),
        clip("vit_base_patch32_clip_384", 32, 768, 12, 12, 384),
        clip("vit_base_patch32_clip_448", 32, 768, 12, 12, 448),
        clip("vit_base_patch16_clip_224", 16, 768, 12, 12, 224),
        clip("vit_base_patch16_clip_384", 16, 768, 12, 12, 384),
        clip("vit_base_patch16_plus_clip_240", 16, 896, 12, 14, 240),
        clip("vit_large_patch14_clip_224", 14, 1024, 24, 16, 224),
        clip("vit_large_patch14_clip_336", 14, 1024, 24, 16, 336),
        clip("vit_huge_patch14_clip_224", 14, 1280, 32, 16, 224),
        clip("vit_huge_patch14_clip_336", 14, 1280, 32, 16, 336),
        clip("vit_huge_patch14_clip_378", 14, 1280, 32, 16, 378),
        clip("vit_giant_patch14_clip_224", 14, 1408, 40, 16, 224, 48.0 / 11.0),
        clip("vit_gigantic_patch14_clip_224", 14, 1664, 48, 16, 224, 64.0 / 13.0),
        clip("vit_gigantic_patch14_clip_378", 14, 1664, 48, 16, 378, 64.0 / 13.0),
        clip("vit_base_patch32_clip_quickgelu_224", 32, 768, 12, 12, 224),
        clip("vit_base_patch16_clip_quickgelu_224", 16, 768, 12, 12, 224),
        clip("vit_large_patch14_clip_quickgelu_224", 14, 1024, 24, 16, 224),
        clip("vit_large_patch14_clip_quickgelu_336", 14, 1024, 24, 16, 336),
        clip("vit_huge_patch14_clip_quickgelu_224", 14, 1280, 32, 16, 224),
        clip("vit_huge_patch14_clip_quickgelu_378", 14, 1280, 32, 16, 378),
        clip("vit_gigantic_patch14_clip_quickgelu_224", 14, 1664, 48, 16, 224, 64.0 / 13.0),
        dinov2("vit_small_patch14_dinov2", 384, 12, 6, false),
        dinov2("vit_base_patch14_dinov2", 768, 12, 12, false),
        dinov2("vit_large_patch14_dinov2", 1024, 24, 16, false),
        dinov2("vit_giant_patch14_dinov2", 1536, 40, 24, false, true),
        dinov2("vit_small_patch14_reg4_dinov2", 384, 12, 6, true),
        dinov2("vit_base_patch14_reg4_dinov2", 768, 12, 12, true),
        dinov2("vit_large_patch14_reg4_dinov2", 1024, 24, 16, true),
        dinov2("vit_giant_patch14_reg4_dinov2", 1536, 40, 24, true, true),
        siglip("vit_base_patch16_siglip_224", 16, 768, 12, 12, 224),
        siglip("vit_base_patch16_siglip_256", 16, 768, 12, 12, 256),
        siglip("vit_base_patch16_siglip_384", 16, 768, 12, 12, 384),
        siglip("vit_base_patch16_siglip_512", 16, 768, 12, 12, 512),
        siglip("vit_large_patch16_siglip_256", 16, 1024, 24, 16, 256),
        siglip("vit_large_patch16_siglip_384", 16, 1024, 24, 16, 384),
        siglip("vit_so400m_patch14_siglip_224", 14, 1152, 27, 16, 224, 3.7362),
        siglip("vit_so400m_patch14_siglip_378", 14, 1152, 27, 16, 378, 3.7362),
        siglip("vit_so400m_patch14_siglip_384", 14, 1152, 27, 16, 384, 3.7362),
        reg_gap("vit_little_patch16_reg4_gap_256", 320, 14, 5, 4, 5.6, 256),
        reg_gap("vit_medium_patch16_reg4_gap_256", 512, 12, 8, 4, 4.0, 256),
        reg_gap("vit_betwixt_patch16_reg4_gap_256", 640, 12, 10, 4, 4.0, 256),
    };
    // ViT-B/16 with 4 registers: no LayerScale (init_values unset).
    VitArgs reg_base = reg_gap("vit_base_patch16_reg4_gap_256", 768, 12, 12, 4, 4.0, 256);
    reg_base.layer_scale = false;
    out.push_back(reg_base);
    // ViT-B/16 from the MIIL ImageNet-21k weights: qkv without bias.
    VitArgs miil = plain("vit_base_patch16_224_miil", 16, 768, 12, 12, 224);
    miil.qkv_bias = false;
    out.push_back(miil);
    // The *_clip_quickgelu_* towers: act_layer='quick_gelu' (timm.layers.QuickGELU).
    for (VitArgs& a : out)
      if (a.name.find("_quickgelu_") != std::string_view::npos) a.act = "QuickGELU";
    return out;
  }();
  return v;
}

TensorTree build(const BuildRequest& r) {
  const std::string arch = timm::architecture(r);
  for (const auto& v : variants())
    if (v.name == arch) return timm::build_vit(r, v);
  timm::unsupported(r, "timm_vit", arch);
}

std::vector<std::string_view> keys() {
  std::vector<std::string_view> k;
  for (const auto& v : variants()) k.push_back(v.name);
  return k;
}

}  // namespace

const Family& timm_vit_family() {
  static const Family f{"timm", {}, {{"VisionTransformer", "AutoModel"}}, &build, &keys};
  return f;
}

}  // namespace memfit::arch
