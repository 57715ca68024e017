// timm EfficientNet class (timm/models/efficientnet.py, timm 0.9–1.0): EfficientNet B0–B8/L2
// (+ tf_* ports with TF 'same' padding), EfficientNet-Lite0–4 and MobileNet-V2 — conv_stem, bn1,
// blocks (timm_effnet_common.cpp), conv_head, bn2, global_pool, classifier. The activations
// (act_layer 'swish' → nn.SiLU for EfficientNet, 'relu6' → nn.ReLU6 for Lite and MobileNet-V2)
// and the head's SelectAdaptivePool2d follow timm 1.0.3 efficientnet.py
// (huggingface/pytorch-image-models @ v1.0.3, cb0e4391).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "families.h"
#include "timm_effnet_common.h"

namespace memfit::arch {
namespace {

using timm::EffNetDef;

enum class Gen { kEfficientNet, kLite, kMobileNetV2 };

struct EffArgs {
  std::string_view name;
  Gen gen;
  double channel_multiplier;
  double depth_multiplier;
  bool tf = false;              // tf_* weights: pad_type='same'
  bool fix_stem_head = false;   // mobilenetv2_110d / 120d
};

const std::vector<EffArgs>& variants() {
  using G = Gen;
  static const std::vector<EffArgs> v = {
      {"efficientnet_b0", G::kEfficientNet, 1.0, 1.0},
      {"efficientnet_b1", G::kEfficientNet, 1.0, 1.1},
      {"efficientnet_b2", G::kEfficientNet, 1.1, 1.2},
      {"efficientnet_b3", G::kEfficientNet, 1.2, 1.4},
      {"efficientnet_b4", G::kEfficientNet, 1.4, 1.8},
      {"efficientnet_b5", G::kEfficientNet, 1.6, 2.2},
      {"efficientnet_b6", G::kEfficientNet, 1.8, 2.6},
      {"efficientnet_b7", G::kEfficientNet, 2.0, 3.1},
      {"efficientnet_b8", G::kEfficientNet, 2.2, 3.6},
      {"efficientnet_l2", G::kEfficientNet, 4.3, 5.3},
      {"tf_efficientnet_b0", G::kEfficientNet, 1.0, 1.0, true},
      {"tf_efficientnet_b1", G::kEfficientNet, 1.0, 1.1, true},
      {"tf_efficientnet_b2", G::kEfficientNet, 1.1, 1.2, true},
      {"tf_efficientnet_b3", G::kEfficientNet, 1.2, 1.4, true},
      {"tf_efficientnet_b4", G::kEfficientNet, 1.4, 1.8, true},
      {"tf_efficientnet_b5", G::kEfficientNet, 1.6, 2.2, true},
      {"tf_efficientnet_b6", G::kEfficientNet, 1.8, 2.6, true},
      {"tf_efficientnet_b7", G::kEfficientNet, 2.0, 3.1, true},
      {"tf_efficientnet_b8", G::kEfficientNet, 2.2, 3.6, true},
      {"tf_efficientnet_l2", G::kEfficientNet, 4.3, 5.3, true},
      {"efficientnet_lite0", G::kLite, 1.0, 1.0},
      {"efficientnet_lite1", G::kLite, 1.0, 1.1},
      {"efficientnet_lite2", G::kLite, 1.1, 1.2},
      {"efficientnet_lite3", G::kLite, 1.2, 1.4},
      {"efficientnet_lite4", G::kLite, 1.4, 1.8},
      {"tf_efficientnet_lite0", G::kLite, 1.0, 1.0, true},
      {"tf_efficientnet_lite1", G::kLite, 1.0, 1.1, true},
      {"tf_efficientnet_lite2", G::kLite, 1.1, 1.2, true},
      {"tf_efficientnet_lite3", G::kLite, 1.2, 1.4, true},
      {"tf_efficientnet_lite4", G::kLite, 1.4, 1.8, true},
      {"mobilenetv2_050", G::kMobileNetV2, 0.5, 1.0},
      {"mobilenetv2_075", G::kMobileNetV2, 0.75, 1.0},
      {"mobilenetv2_100", G::kMobileNetV2, 1.0, 1.0},
      {"mobilenetv2_140", G::kMobileNetV2, 1.4, 1.0},
      {"mobilenetv2_110d", G::kMobileNetV2, 1.1, 1.2, false, true},
      {"mobilenetv2_120d", G::kMobileNetV2, 1.2, 1.4, false, true},
  };
  return v;
}

// _gen_efficientnet / _gen_efficientnet_lite / _gen_mobilenet_v2: arch_def and kwargs.
EffNetDef definition(const EffArgs& a, std::int64_t* num_features) {
  EffNetDef d;
  d.channel_multiplier = a.channel_multiplier;
  d.depth_multiplier = a.depth_multiplier;
  d.pad_same = a.tf;
  d.stem_size = 32;
  switch (a.gen) {
    case Gen::kEfficientNet:
      d.arch_def = "ds_r1_k3_s1_e1_c16_se0.25 | "
                   "ir_r2_k3_s2_e6_c24_se0.25 | "
                   "ir_r2_k5_s2_e6_c40_se0.25 | "
                   "ir_r3_k3_s2_e6_c80_se0.25 | "
                   "ir_r3_k5_s1_e6_c112_se0.25 | "
                   "ir_r4_k5_s2_e6_c192_se0.25 | "
                   "ir_r1_k3_s1_e6_c320_se0.25";
      *num_features = d.round_chs(1280);
      d.act = "SiLU";  // resolve_act_layer(kwargs, 'swish')
      break;
    case Gen::kLite:
      d.arch_def = "ds_r1_k3_s1_e1_c16 | "
                   "ir_r2_k3_s2_e6_c24 | "
                   "ir_r2_k5_s2_e6_c40 | "
                   "ir_r3_k3_s2_e6_c80 | "
                   "ir_r3_k5_s1_e6_c112 | "
                   "ir_r4_k5_s2_e6_c192 | "
                   "ir_r1_k3_s1_e6_c320";
      d.fix_first_last = true;
      d.fix_stem = true;
      *num_features = 1280;
      d.act = "ReLU6";  // resolve_act_layer(kwargs, 'relu6')
      break;
    case Gen::kMobileNetV2:
      d.arch_def = "ds_r1_k3_s1_c16 | "
                   "ir_r2_k3_s2_e6_c24 | "
                   "ir_r3_k3_s2_e6_c32 | "
                   "ir_r4_k3_s2_e6_c64 | "
                   "ir_r3_k3_s1_e6_c96 | "
                   "ir_r3_k3_s2_e6_c160 | "
                   "ir_r1_k3_s1_e6_c320";
      d.fix_first_last = a.fix_stem_head;
      d.fix_stem = a.fix_stem_head;
      *num_features = a.fix_stem_head ? 1280 : std::max<std::int64_t>(1280, d.round_chs(1280));
      d.act = "ReLU6";  // resolve_act_layer(kwargs, 'relu6')
      break;
  }
  return d;
}

TensorTree build(const BuildRequest& r) {
  const std::string arch = timm::architecture(r);
  const EffArgs* a = nullptr;
  for (const auto& v : variants())
    if (v.name == arch) a = &v;
  if (!a) timm::unsupported(r, "timm_efficientnet", arch);
  const std::int64_t classes = timm::num_classes(r);
  std::int64_t num_features = 0;
  const EffNetDef d = definition(*a, &num_features);

  TreeBuilder b{"EfficientNet"};
  const std::int64_t stem = timm::effnet_stem(b, d);
  const std::int64_t head_chs = timm::effnet_blocks(b, r.config, d, stem);
  timm::conv2d(b, "conv_head", head_chs, num_features, 1, 1, 1, false, d.pad_same);
  timm::bn_act(b, "bn2", num_features, d.act);
  timm::select_adaptive_pool(b, "global_pool", true);  // create_classifier: flatten before fc
  timm::classifier(b, "classifier", num_features, classes);
  return b.finish();
}

std::vector<std::string_view> keys() {
  std::vector<std::string_view> k;
  for (const auto& v : variants()) k.push_back(v.name);
  return k;
}

}  // namespace

const Family& timm_efficientnet_family() {
  static const Family f{"timm", {}, {{"EfficientNet", "AutoModel"}}, &build, &keys};
  return f;
}

}  // namespace memfit::arch
