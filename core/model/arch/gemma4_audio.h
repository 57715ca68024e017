// Gemma 4's audio tower (transformers models/gemma4/modeling_gemma4.py, transformers 5.5 / main:
// Gemma4AudioModel, model_type gemma4_audio, the Universal Speech Model conformer of Gemma 4
// E2B / E4B) and the Gemma4ClippableLinear its layers share with the vision tower.
#pragma once

#include <cstdint>
#include <string_view>

#include "common.h"

namespace memfit::arch::gemma4 {

// Gemma4RMSNorm with its weight [dim].
void norm(TreeBuilder& b, std::string_view name, std::int64_t dim);
// Gemma4ClippableLinear: `linear` (no bias) and, with use_clipped_linears, the persistent scalar
// buffers input_min, input_max, output_min, output_max.
void clippable(TreeBuilder& b, std::string_view name, std::int64_t in, std::int64_t out, bool clipped);

// Gemma4AudioModel from `audio_config`:
//   subsample_conv_projection {layer0, layer1: Gemma4AudioSubSampleConvProjectionLayer {conv
//     (Conv2d 3×3 stride 2, no bias: [c0, 1, 3, 3], [c1, c0, 3, 3]), norm (LayerNorm without
//     bias), act (ReLU)}, input_proj_linear [hidden, (c0 / 4) · c1]} — c = subsampling_conv_channels;
//   rel_pos_enc {inv_timescales [1, 1, hidden / 2], not persistent};
//   layers.N: Gemma4AudioLayer {feed_forward1, feed_forward2 (Gemma4AudioFeedForward:
//     ffw_layer_1 hidden → 4·hidden, ffw_layer_2 back, both clippable; pre/post_layer_norm;
//     act_fn), self_attn (Gemma4AudioAttention: q/k/v_proj and post clippable, relative_k_proj
//     without bias, per_dim_scale [hidden / heads], a non-persistent scalar softcap), lconv1d
//     (Gemma4AudioLightConv1d: linear_start hidden → 2·hidden and linear_end clippable,
//     depthwise_conv1d [hidden, 1, conv_kernel_size] without bias, pre_layer_norm, conv_norm,
//     act_fn), norm_pre_attn, norm_post_attn, norm_out};
//   output_proj [output_proj_dims, hidden] with bias.
// Gemma4AudioConfig defaults: hidden 1024, 12 layers, 8 heads, silu, channels [128, 32],
// kernel 5, clipped linears, output_proj_dims 1536.
TensorTree audio_tower(const Config& c);

// The width the audio tower hands embed_audio (Gemma4MultimodalEmbedder reads
// `output_proj_dims`, else `hidden_size`).
std::int64_t audio_output_dims(const Config& c);

}  // namespace memfit::arch::gemma4
