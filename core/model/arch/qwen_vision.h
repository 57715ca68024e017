// The Qwen vision towers ("visual"), one layout in three generations (transformers 5.x
// models/qwen2_vl/modeling_qwen2_vl.py, models/qwen2_5_vl/modular_qwen2_5_vl.py,
// models/qwen3_5/modeling_qwen3_5.py; Qwen2-VL first in 4.45, Qwen2.5-VL in 4.49):
//
//   visual: <VisionModel>
//     patch_embed.proj      Conv3d(in_channels, width, [temporal_patch, patch, patch])
//     pos_embed             Qwen3.5 only: Embedding(num_position_embeddings, width)
//     rotary_pos_emb        inv_freq [head_dim / 4] (float32, non-persistent)
//     blocks.N              norm1, norm2, attn (qkv [3·width, width] + bias, proj + bias), mlp
//     merger                norm over `width`, then width·merge² → width·merge² → out_hidden
//
// What differs is data: the norms (LayerNorm or RMSNorm), the block MLP (fc1/fc2, gated
// gate/up/down with biases, linear_fc1/linear_fc2) and the merger's names.
//
// ERNIE 4.5 VL's tower (models/ernie4_5_vl_moe/modeling_ernie4_5_vl_moe.py; Baidu's remote code
// names it DFNRopeVisionTransformer, Qwen2-VL's original name) is Qwen2-VL's blocks with three
// differences: patch_embed.proj is a Linear [width, in_channels·patch²] without bias, its width
// and MLP width are hidden_size and intermediate_size, and a LayerNorm `ln` ends it instead of a
// merger (ERNIE merges patches in its resampler).
#pragma once

#include <cstdint>
#include <string>

#include "common.h"

namespace memfit::arch::vision {

enum class Generation { kQwen2Vl, kQwen2_5Vl, kQwen3_5, kErnie4_5Vl };

struct VisionDims {
  std::int64_t depth = 0, width = 0, heads = 0, inter = 0, out_hidden = 0;
  std::int64_t in_channels = 0, patch = 0, temporal_patch = 0, merge = 0, positions = 0;
  std::string act;
};

// The vision_config's keys with the defaults of that generation's vision config class.
VisionDims read_vision(const Config& v, Generation g);

// The tower, as a child module `name` of the current one.
void vision_tower(TreeBuilder& b, std::string_view name, const VisionDims& v, Generation g);

// The vision_config of a top-level config; its defaults when the config has none.
Config vision_config(const Config& top);

}  // namespace memfit::arch::vision
