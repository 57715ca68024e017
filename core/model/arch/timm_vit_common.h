// timm's VisionTransformer (timm/models/vision_transformer.py) and DeiT's
// VisionTransformerDistilled (timm/models/deit.py), shared by timm_vit.cpp and timm_deit.cpp.
// Modules without tensors (nn.Identity placeholders, nn.Dropout, the Mlp activation) follow
// timm 1.0.3 vision_transformer.py, deit.py, layers/mlp.py, patch_embed.py, attention_pool.py
// (huggingface/pytorch-image-models @ v1.0.3, cb0e4391).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "timm_common.h"

namespace memfit::arch::timm {

enum class VitMlp { kMlp, kSwiGLUPacked };

// The model_args of a VisionTransformer entry point (defaults are VisionTransformer.__init__'s).
struct VitArgs {
  std::string_view name;
  std::int64_t patch = 16;
  std::int64_t dim = 768;
  std::int64_t depth = 12;
  std::int64_t heads = 12;
  std::int64_t img = 224;   // the input size of the architecture's default pretrained_cfg
  double mlp_ratio = 4.0;
  bool qkv_bias = true;
  bool class_token = true;
  std::string_view global_pool = "token";  // '', 'avg', 'token', 'map'
  std::optional<bool> fc_norm;             // None: on when global_pool is avg/avgmax/max
  bool layer_scale = false;                // init_values is not None
  bool pre_norm = false;
  bool no_embed_class = false;
  std::int64_t reg_tokens = 0;
  VitMlp mlp = VitMlp::kMlp;
  std::string_view act = "GELU";           // the blocks' Mlp act_layer class (nn.GELU default)
  bool distilled = false;                  // VisionTransformerDistilled (dist_token, head_dist)
  bool headless = false;  // its pretrained tags (lvd142m, webli, ...) have num_classes=0
};

// Builds the whole model. img_size comes from pretrained_cfg.input_size when the config has it
// (ViT pretrained cfgs set fixed_input_size), num_classes from the config (see timm_common.h).
TensorTree build_vit(const BuildRequest& r, const VitArgs& a);

}  // namespace memfit::arch::timm
