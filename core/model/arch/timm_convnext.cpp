// timm ConvNeXt / ConvNeXt-V2 (timm/models/convnext.py, timm 0.9–1.0): stem, four
// ConvNeXtStages (downsample = LayerNorm2d + 2x2 conv, then ConvNeXtBlocks), the
// NormMlpClassifierHead (or norm_pre + ClassifierHead for the head-norm-first variant).
// Modules without tensors (GELU, Dropouts, nn.Identity shortcut / drop_path / norm_pre / stage-0
// downsample, the heads' global_pool and flatten) follow timm 1.0.3 convnext.py, layers/mlp.py
// and layers/classifier.py (huggingface/pytorch-image-models @ v1.0.3, cb0e4391).
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "families.h"
#include "timm_common.h"

namespace memfit::arch {
namespace {

enum class StemType { kPatch, kOverlap, kOverlapTiered };

struct ConvNeXtArgs {
  std::string_view name;
  std::array<std::int64_t, 4> depths;
  std::array<std::int64_t, 4> dims;
  bool conv_mlp = false;       // 1x1 convs + LayerNorm2d in the blocks instead of Linear + LayerNorm
  bool v2 = false;             // use_grn=True, ls_init_value=None (no gamma)
  StemType stem = StemType::kPatch;
  bool head_norm_first = false;
  std::int64_t head_hidden = 0;  // head_hidden_size (pre_logits fc)
};

const std::vector<ConvNeXtArgs>& variants() {
  using S = StemType;
  static const std::vector<ConvNeXtArgs> v = {
      {"convnext_atto", {2, 2, 6, 2}, {40, 80, 160, 320}, true},
      {"convnext_atto_ols", {2, 2, 6, 2}, {40, 80, 160, 320}, true, false, S::kOverlapTiered},
      {"convnext_femto", {2, 2, 6, 2}, {48, 96, 192, 384}, true},
      {"convnext_femto_ols", {2, 2, 6, 2}, {48, 96, 192, 384}, true, false, S::kOverlapTiered},
      {"convnext_pico", {2, 2, 6, 2}, {64, 128, 256, 512}, true},
      {"convnext_pico_ols", {2, 2, 6, 2}, {64, 128, 256, 512}, true, false, S::kOverlapTiered},
      {"convnext_nano", {2, 2, 8, 2}, {80, 160, 320, 640}, true},
      {"convnext_nano_ols", {2, 2, 8, 2}, {80, 160, 320, 640}, true, false, S::kOverlap},
      {"convnext_tiny_hnf", {3, 3, 9, 3}, {96, 192, 384, 768}, true, false, S::kPatch, true},
      {"convnext_tiny", {3, 3, 9, 3}, {96, 192, 384, 768}},
      {"convnext_small", {3, 3, 27, 3}, {96, 192, 384, 768}},
      {"convnext_base", {3, 3, 27, 3}, {128, 256, 512, 1024}},
      {"convnext_large", {3, 3, 27, 3}, {192, 384, 768, 1536}},
      {"convnext_large_mlp", {3, 3, 27, 3}, {192, 384, 768, 1536}, false, false, S::kPatch, false,
       1536},
      {"convnext_xlarge", {3, 3, 27, 3}, {256, 512, 1024, 2048}},
      {"convnext_xxlarge", {3, 4, 30, 3}, {384, 768, 1536, 3072}},
      {"convnextv2_atto", {2, 2, 6, 2}, {40, 80, 160, 320}, true, true},
      {"convnextv2_femto", {2, 2, 6, 2}, {48, 96, 192, 384}, true, true},
      {"convnextv2_pico", {2, 2, 6, 2}, {64, 128, 256, 512}, true, true},
      {"convnextv2_nano", {2, 2, 8, 2}, {80, 160, 320, 640}, true, true},
      {"convnextv2_tiny", {3, 3, 9, 3}, {96, 192, 384, 768}, false, true},
      {"convnextv2_small", {3, 3, 27, 3}, {96, 192, 384, 768}, false, true},
      {"convnextv2_base", {3, 3, 27, 3}, {128, 256, 512, 1024}, false, true},
      {"convnextv2_large", {3, 3, 27, 3}, {192, 384, 768, 1536}, false, true},
      {"convnextv2_huge", {3, 3, 27, 3}, {352, 704, 1408, 2816}, false, true},
  };
  return v;
}

// LayerNorm2d (NCHW) and LayerNorm (channels-last): both weight + bias.
void norm2d(TreeBuilder& b, std::string_view name, std::int64_t dim) {
  nn::layer_norm(b, name, dim, true, "LayerNorm2d");
}

// Mlp (fc1, act, drop1, norm = nn.Identity, fc2, drop2) / GlobalResponseNormMlp (fc1, act,
// drop1, grn, fc2, drop2) with nn.Linear, or with 1x1 nn.Conv2d when conv_mlp; act_layer='gelu'
// is timm's GELU.
void block_mlp(TreeBuilder& b, const ConvNeXtArgs& a, std::int64_t dim) {
  const std::int64_t hidden = 4 * dim;  // int(mlp_ratio * out_chs), mlp_ratio = 4
  auto fc = [&](std::string_view name, std::int64_t in, std::int64_t out) {
    if (a.conv_mlp) nn::conv2d(b, name, in, out, 1, 1, true);
    else nn::linear(b, name, in, out);
  };
  auto s = b.module("mlp", a.v2 ? "GlobalResponseNormMlp" : "Mlp");
  fc("fc1", dim, hidden);
  b.stateless("act", "GELU");
  nn::dropout(b, "drop1");
  if (a.v2) {
    auto grn = b.module("grn", "GlobalResponseNorm");
    b.param("weight", {hidden});
    b.param("bias", {hidden});
  } else {
    timm::identity(b, "norm");
  }
  fc("fc2", hidden, dim);
  nn::dropout(b, "drop2");
}

// ConvNeXtBlock: gamma (a direct parameter, so first in state_dict order), conv_dw, norm, mlp,
// shortcut and drop_path (nn.Identity: same channels, stride 1; drop_path_rate 0).
void block(TreeBuilder& b, const ConvNeXtArgs& a, std::int64_t dim) {
  if (!a.v2) b.param("gamma", {dim});
  timm::conv2d(b, "conv_dw", dim, dim, 7, 1, dim, true);
  if (a.conv_mlp) norm2d(b, "norm", dim);
  else nn::layer_norm(b, "norm", dim);
  block_mlp(b, a, dim);
  timm::identity(b, "shortcut");
  timm::identity(b, "drop_path");
}

std::int64_t stem(TreeBuilder& b, const ConvNeXtArgs& a) {
  const std::int64_t d0 = a.dims[0];
  auto s = b.module("stem", "Sequential");
  if (a.stem == StemType::kPatch) {  // Conv2d(k=4, s=4) + norm
    nn::conv2d(b, "0", 3, d0, 4, 4, true);
    norm2d(b, "1", d0);
    return d0;
  }
  // Overlapping stem: conv 3x3 s2, conv 3x3 s2, norm ('act' stems are not listed here).
  const std::int64_t mid = a.stem == StemType::kOverlapTiered ? timm::make_divisible(d0 / 2) : d0;
  nn::conv2d(b, "0", 3, mid, 3, 3, true);
  nn::conv2d(b, "1", mid, d0, 3, 3, true);
  norm2d(b, "2", d0);
  return d0;
}

TensorTree build(const BuildRequest& r) {
  const std::string arch = timm::architecture(r);
  const ConvNeXtArgs* a = nullptr;
  for (const auto& v : variants())
    if (v.name == arch) a = &v;
  if (!a) timm::unsupported(r, "timm_convnext", arch);
  const std::int64_t classes = timm::num_classes(r);

  TreeBuilder b{"ConvNeXt"};
  std::int64_t prev = stem(b, *a);
  {
    auto stages = b.module("stages", "Sequential");
    for (int i = 0; i < 4; ++i) {
      auto st = b.item(i, "ConvNeXtStage");
      const std::int64_t out = a->dims[i];
      // Stage 0 keeps stride 1 and the channel count: its downsample is nn.Identity.
      if (i > 0 || prev != out) {
        auto ds = b.module("downsample", "Sequential");
        norm2d(b, "0", prev);
        nn::conv2d(b, "1", prev, out, 2, 2, true);
      } else {
        timm::identity(b, "downsample");
      }
      auto blocks = b.module("blocks", "Sequential");
      for (std::int64_t j = 0; j < a->depths[i]; ++j) {
        auto blk = b.item(j, "ConvNeXtBlock");
        block(b, *a, out);
      }
      prev = out;
    }
  }
  if (a->head_norm_first) {  // norm_pre + ClassifierHead(global_pool, drop, fc, flatten)
    norm2d(b, "norm_pre", prev);
    auto head = b.module("head", "ClassifierHead");
    timm::select_adaptive_pool(b, "global_pool", true);  // create_classifier flattens (no conv)
    nn::dropout(b, "drop");
    timm::classifier(b, "fc", prev, classes);
    timm::identity(b, "flatten");  // nn.Flatten only with use_conv
  } else {  // norm_pre = nn.Identity; NormMlpClassifierHead(global_pool, norm, flatten,
            // pre_logits, drop, fc)
    timm::identity(b, "norm_pre");
    auto head = b.module("head", "NormMlpClassifierHead");
    timm::select_adaptive_pool(b, "global_pool", false);
    norm2d(b, "norm", prev);
    b.stateless("flatten", "Flatten");
    std::int64_t features = prev;
    if (a->head_hidden) {  // Sequential(fc, act) with act_layer='gelu'
      auto pre = b.module("pre_logits", "Sequential");
      nn::linear(b, "fc", prev, a->head_hidden);
      b.stateless("act", "GELU");
      features = a->head_hidden;
    } else {
      timm::identity(b, "pre_logits");
    }
    nn::dropout(b, "drop");
    timm::classifier(b, "fc", features, classes);
  }
  return b.finish();
}

std::vector<std::string_view> keys() {
  std::vector<std::string_view> k;
  for (const auto& v : variants()) k.push_back(v.name);
  return k;
}

}  // namespace

const Family& timm_convnext_family() {
  static const Family f{"timm", {}, {{"ConvNeXt", "AutoModel"}}, &build, &keys};
  return f;
}

}  // namespace memfit::arch
