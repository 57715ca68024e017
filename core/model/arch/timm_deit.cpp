// timm DeiT entry points (timm/models/deit.py): deit_* are plain VisionTransformers,
// deit_*_distilled_* are VisionTransformerDistilled (dist_token, head_dist, two prefix tokens in
// pos_embed), deit3_* add LayerScale (init_values=1e-6) and no_embed_class. The builder is
// timm_vit_common.cpp; per timm 1.0.3 deit.py (huggingface/pytorch-image-models @ v1.0.3) these
// entry points keep VisionTransformer's default modules without tensors (nn.GELU, Dropouts,
// nn.Identity placeholders), and head_dist is an nn.Identity when num_classes is 0.
#include <string>
#include <string_view>
#include <vector>

#include "families.h"
#include "timm_vit_common.h"

namespace memfit::arch {
namespace {

using timm::VitArgs;

VitArgs deit(std::string_view name, std::int64_t patch, std::int64_t dim, std::int64_t depth,
             std::int64_t heads, std::int64_t img, bool distilled = false, bool deit3 = false) {
  VitArgs a;
  a.name = name;
  a.patch = patch;
  a.dim = dim;
  a.depth = depth;
  a.heads = heads;
  a.img = img;
  a.distilled = distilled;
  a.layer_scale = deit3;
  a.no_embed_class = deit3;
  return a;
}

const std::vector<VitArgs>& variants() {
  static const std::vector<VitArgs> v = {
      deit("deit_tiny_patch16_224", 16, 192, 12, 3, 224),
      deit("deit_small_patch16_224", 16, 384, 12, 6, 224),
      deit("deit_base_patch16_224", 16, 768, 12, 12, 224),
      deit("deit_base_patch16_384", 16, 768, 12, 12, 384),
      deit("deit_tiny_distilled_patch16_224", 16, 192, 12, 3, 224, true),
      deit("deit_small_distilled_patch16_224", 16, 384, 12, 6, 224, true),
      deit("deit_base_distilled_patch16_224", 16, 768, 12, 12, 224, true),
      deit("deit_base_distilled_patch16_384", 16, 768, 12, 12, 384, true),
      deit("deit3_small_patch16_224", 16, 384, 12, 6, 224, false, true),
      deit("deit3_small_patch16_384", 16, 384, 12, 6, 384, false, true),
      deit("deit3_medium_patch16_224", 16, 512, 12, 8, 224, false, true),
      deit("deit3_base_patch16_224", 16, 768, 12, 12, 224, false, true),
      deit("deit3_base_patch16_384", 16, 768, 12, 12, 384, false, true),
      deit("deit3_large_patch16_224", 16, 1024, 24, 16, 224, false, true),
      deit("deit3_large_patch16_384", 16, 1024, 24, 16, 384, false, true),
      deit("deit3_huge_patch14_224", 14, 1280, 32, 16, 224, false, true),
  };
  return v;
}

TensorTree build(const BuildRequest& r) {
  const std::string arch = timm::architecture(r);
  for (const auto& v : variants())
    if (v.name == arch) return timm::build_vit(r, v);
  timm::unsupported(r, "timm_deit", arch);
}

std::vector<std::string_view> keys() {
  std::vector<std::string_view> k;
  for (const auto& v : variants()) k.push_back(v.name);
  return k;
}

}  // namespace

const Family& timm_deit_family() {
  // The root class follows the architecture (VisionTransformerDistilled for *_distilled_*).
  static const Family f{"timm",
                        {},
                        {{"VisionTransformer", "AutoModel"},
                         {"VisionTransformerDistilled", "AutoModel"}},
                        &build, &keys};
  return f;
}

}  // namespace memfit::arch
