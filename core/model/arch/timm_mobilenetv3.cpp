// timm MobileNetV3 (timm/models/mobilenetv3.py, timm 0.9–1.0): conv_stem, bn1, blocks
// (timm_effnet_common.cpp, SE channels from the expanded width), then the "efficient head":
// global pool, conv_head (1x1, with bias), act2, flatten, classifier. Activations (hard_swish →
// nn.Hardswish, 'relu' for the minimal models; SE force_act_layer nn.ReLU and gate
// 'hard_sigmoid' → nn.Hardsigmoid) and the head's modules without tensors follow timm 1.0.3
// mobilenetv3.py (huggingface/pytorch-image-models @ v1.0.3, cb0e4391).
#include <string>
#include <string_view>
#include <vector>

#include "families.h"
#include "timm_effnet_common.h"

namespace memfit::arch {
namespace {

using timm::EffNetDef;

struct Mnv3Args {
  std::string_view name;
  double channel_multiplier;
  bool tf = false;
};

const std::vector<Mnv3Args>& variants() {
  static const std::vector<Mnv3Args> v = {
      {"mobilenetv3_large_075", 0.75},
      {"mobilenetv3_large_100", 1.0},
      {"mobilenetv3_small_050", 0.5},
      {"mobilenetv3_small_075", 0.75},
      {"mobilenetv3_small_100", 1.0},
      {"mobilenetv3_rw", 1.0},
      {"tf_mobilenetv3_large_075", 0.75, true},
      {"tf_mobilenetv3_large_100", 1.0, true},
      {"tf_mobilenetv3_large_minimal_100", 1.0, true},
      {"tf_mobilenetv3_small_075", 0.75, true},
      {"tf_mobilenetv3_small_100", 1.0, true},
      {"tf_mobilenetv3_small_minimal_100", 1.0, true},
  };
  return v;
}

// _gen_mobilenet_v3 (and _gen_mobilenet_v3_rw): arch_def by variant name.
EffNetDef definition(const Mnv3Args& a, std::int64_t* num_features, bool* head_bias) {
  const std::string name(a.name);
  const bool small = name.find("small") != std::string::npos;
  const bool minimal = name.find("minimal") != std::string::npos;
  EffNetDef d;
  d.channel_multiplier = a.channel_multiplier;
  d.pad_same = a.tf;
  d.stem_size = 16;
  d.se_from_exp = true;
  d.se_gate = "Hardsigmoid";  // SqueezeExcite(gate_layer='hard_sigmoid')
  d.act = minimal ? "ReLU" : "Hardswish";  // resolve_act_layer(kwargs, 'relu' / 'hard_swish')
  *head_bias = true;
  if (name == "mobilenetv3_rw") {
    // SqueezeExcite(gate_layer='hard_sigmoid'): default rd_round_fn=round; head_bias=False.
    d.arch_def = "ds_r1_k3_s1_e1_c16_nre_noskip | "
                 "ir_r1_k3_s2_e4_c24_nre ir_r1_k3_s1_e3_c24_nre | "
                 "ir_r3_k5_s2_e3_c40_se0.25_nre | "
                 "ir_r1_k3_s2_e6_c80 ir_r1_k3_s1_e2.5_c80 ir_r2_k3_s1_e2.3_c80 | "
                 "ir_r2_k3_s1_e6_c112_se0.25 | "
                 "ir_r3_k5_s2_e6_c160_se0.25 | "
                 "cn_r1_k1_s1_c960";
    *num_features = 1280;
    *head_bias = false;
    return d;
  }
  d.se_round_channels = true;  // SqueezeExcite(..., rd_round_fn=round_channels)
  d.se_act = "ReLU";           // SqueezeExcite(..., force_act_layer=nn.ReLU)
  d.fix_stem = a.channel_multiplier < 0.75;
  if (small) {
    *num_features = 1024;
    if (minimal)
      d.arch_def = "ds_r1_k3_s2_e1_c16 | "
                   "ir_r1_k3_s2_e4.5_c24 ir_r1_k3_s1_e3.67_c24 | "
                   "ir_r1_k3_s2_e4_c40 ir_r2_k3_s1_e6_c40 | "
                   "ir_r2_k3_s1_e3_c48 | "
                   "ir_r3_k3_s2_e6_c96 | "
                   "cn_r1_k1_s1_c576";
    else
      d.arch_def = "ds_r1_k3_s2_e1_c16_se0.25_nre | "
                   "ir_r1_k3_s2_e4.5_c24_nre ir_r1_k3_s1_e3.67_c24_nre | "
                   "ir_r1_k5_s2_e4_c40_se0.25 ir_r2_k5_s1_e6_c40_se0.25 | "
                   "ir_r2_k5_s1_e3_c48_se0.25 | "
                   "ir_r3_k5_s2_e6_c96_se0.25 | "
                   "cn_r1_k1_s1_c576";
  } else {
    *num_features = 1280;
    if (minimal)
      d.arch_def = "ds_r1_k3_s1_e1_c16 | "
                   "ir_r1_k3_s2_e4_c24 ir_r1_k3_s1_e3_c24 | "
                   "ir_r3_k3_s2_e3_c40 | "
                   "ir_r1_k3_s2_e6_c80 ir_r1_k3_s1_e2.5_c80 ir_r2_k3_s1_e2.3_c80 | "
                   "ir_r2_k3_s1_e6_c112 | "
                   "ir_r3_k3_s2_e6_c160 | "
                   "cn_r1_k1_s1_c960";
    else
      d.arch_def = "ds_r1_k3_s1_e1_c16_nre | "
                   "ir_r1_k3_s2_e4_c24_nre ir_r1_k3_s1_e3_c24_nre | "
                   "ir_r3_k5_s2_e3_c40_se0.25_nre | "
                   "ir_r1_k3_s2_e6_c80 ir_r1_k3_s1_e2.5_c80 ir_r2_k3_s1_e2.3_c80 | "
                   "ir_r2_k3_s1_e6_c112_se0.25 | "
                   "ir_r3_k5_s2_e6_c160_se0.25 | "
                   "cn_r1_k1_s1_c960";
  }
  return d;
}

TensorTree build(const BuildRequest& r) {
  const std::string arch = timm::architecture(r);
  const Mnv3Args* a = nullptr;
  for (const auto& v : variants())
    if (v.name == arch) a = &v;
  if (!a) timm::unsupported(r, "timm_mobilenetv3", arch);
  const std::int64_t classes = timm::num_classes(r);
  std::int64_t num_features = 0;
  bool head_bias = true;
  const EffNetDef d = definition(*a, &num_features, &head_bias);

  TreeBuilder b{"MobileNetV3"};
  const std::int64_t stem = timm::effnet_stem(b, d);
  const std::int64_t head_chs = timm::effnet_blocks(b, r.config, d, stem);
  timm::select_adaptive_pool(b, "global_pool", false);  // SelectAdaptivePool2d(pool_type='avg')
  timm::conv2d(b, "conv_head", head_chs, num_features, 1, 1, 1, head_bias, d.pad_same);
  b.stateless("act2", d.act);
  b.stateless("flatten", "Flatten");
  timm::classifier(b, "classifier", num_features, classes);
  return b.finish();
}

std::vector<std::string_view> keys() {
  std::vector<std::string_view> k;
  for (const auto& v : variants()) k.push_back(v.name);
  return k;
}

}  // namespace

const Family& timm_mobilenetv3_family() {
  static const Family f{"timm", {}, {{"MobileNetV3", "AutoModel"}}, &build, &keys};
  return f;
}

}  // namespace memfit::arch
