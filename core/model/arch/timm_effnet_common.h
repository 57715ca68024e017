// timm's EfficientNet builder (timm/models/_efficientnet_builder.py + _efficientnet_blocks.py),
// shared by timm_efficientnet.cpp (class EfficientNet) and timm_mobilenetv3.cpp (MobileNetV3):
// the block-string decoder ("ir_r2_k3_s2_e6_c24_se0.25"), depth scaling, channel rounding and
// the DepthwiseSeparableConv / InvertedResidual / ConvBnAct blocks with SqueezeExcite.
// Modules without tensors (BatchNormAct2d's drop/act, SqueezeExcite's act1/gate, the nn.Identity
// se/drop_path placeholders) follow timm 1.0.3 _efficientnet_blocks.py, _efficientnet_builder.py
// and layers/norm_act.py (huggingface/pytorch-image-models @ v1.0.3, cb0e4391).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "timm_common.h"

namespace memfit::arch::timm {

struct EffNetDef {
  // timm's arch_def (a list of stages, each a list of block strings) as one literal: stages
  // separated by " | ", a stage's blocks by " ". A literal is data; nested vectors of strings
  // were ~10 KB of WebAssembly code that built them.
  std::string_view arch_def;
  double channel_multiplier = 1.0;
  double depth_multiplier = 1.0;
  bool depth_round = false;     // depth_trunc='round' (default 'ceil')
  bool fix_first_last = false;  // first/last stage depth not scaled
  std::int64_t stem_size = 32;
  bool fix_stem = false;        // stem channels not rounded by the multiplier
  bool pad_same = false;        // tf_* ports: pad_type='same'
  bool se_from_exp = false;     // MobileNetV3: SE ratio relative to the expanded channels
  bool se_round_channels = false;  // SE rd_round_fn=round_channels (else Python round)
  // Activation classes: the model's act_layer (blocks without an n<act> op, stem and head), the
  // SE force_act_layer (empty: the block's own act) and the SE gate_layer.
  std::string_view act = "ReLU";
  std::string_view se_act;
  std::string_view se_gate = "Sigmoid";

  // round_channels(c, multiplier) as the builder's round_chs_fn.
  std::int64_t round_chs(std::int64_t c) const;
};

// conv_stem + bn1 (BatchNormAct2d with the model's act); returns the stem's channels.
std::int64_t effnet_stem(TreeBuilder& b, const EffNetDef& d);
// The `blocks` Sequential of stage Sequentials; returns the channels of the last block.
std::int64_t effnet_blocks(TreeBuilder& b, const Config& c, const EffNetDef& d,
                           std::int64_t in_chs);
// A BatchNormAct2d (BatchNorm2d subclass: weight, bias, running stats, num_batches_tracked) and
// its children drop (nn.Identity) and act (the class `act`; nn.Identity when empty, i.e.
// apply_act=False).
void bn_act(TreeBuilder& b, std::string_view name, std::int64_t channels, std::string_view act);

}  // namespace memfit::arch::timm
