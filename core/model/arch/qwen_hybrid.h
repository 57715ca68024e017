// The hybrid decoder layer of Qwen3-Next, shared by Qwen3.5 and Qwen3.5-MoE (transformers 5.x
// models/qwen3_next/modular_qwen3_next.py, models/qwen3_5/modeling_qwen3_5.py; Qwen3-Next first
// in 4.57): each layer mixes tokens either with a gated DeltaNet (linear attention, a fixed-size
// state per sequence) or with gated full attention, chosen per layer by `layer_types`.
//
//   layers.N: <P>DecoderLayer
//     linear_attn: <P>GatedDeltaNet      when layer_types[N] == "linear_attention"
//     self_attn: <P>Attention            when layer_types[N] == "full_attention"
//     mlp                                family-specific (dense, MoE with a shared expert)
//     input_layernorm, post_attention_layernorm
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llama_like.h"

namespace memfit::arch::hybrid {

// A gated DeltaNet's sizes (Qwen3NextConfig's linear_* keys).
struct LinearAttentionDims {
  std::int64_t k_heads = 0, v_heads = 0, k_head_dim = 0, v_head_dim = 0, conv_kernel = 0;
  std::int64_t key_dim() const { return k_heads * k_head_dim; }
  std::int64_t value_dim() const { return v_heads * v_head_dim; }
  // The short convolution runs over q, k and v together.
  std::int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
  // What transformers' cache keeps per sequence: conv_states [conv_dim, conv_kernel] and
  // recurrent_states [v_heads, k_head_dim, v_head_dim] (torch_chunk_gated_delta_rule's state;
  // q and k heads are repeated up to v_heads). vLLM keeps conv_kernel - 1 columns.
  RecurrentDims state() const {
    return {conv_dim() * conv_kernel, v_heads * k_head_dim * v_head_dim, conv_kernel};
  }
};

// How the DeltaNet projects its input.
enum class InProj {
  kFused,  // Qwen3-Next: in_proj_qkvz [2·key + 2·value, hidden], in_proj_ba [2·v_heads, hidden]
  kSplit,  // Qwen3.5: in_proj_qkv, in_proj_z, in_proj_b, in_proj_a, registered after out_proj
};

// Qwen3NextConfig's defaults for the linear_* keys; v_heads must be a multiple of k_heads.
LinearAttentionDims read_linear_attention(const Config& c);

// Per layer, whether it is a linear-attention layer: `layer_types` ("linear_attention" /
// "full_attention"; the legacy "mamba" / "attention" as transformers remaps them), else every
// `full_attention_interval`-th layer (default 4) is full attention. A list of the wrong length or
// an unknown type is an error naming the key: the layers' tensors depend on it.
std::vector<bool> linear_layers(const Config& c, std::int64_t layers);

// The text decoder's dims with Qwen3NextConfig's conventions: `attention_bias` on all four
// projections, and the rotary width int(head_dim × partial_rotary_factor) with 0.25 by default,
// read from the top level or `rope_parameters`.
DecoderDims read_text_dims(const Config& c, const DecoderDefaults& def);

// The spec every hybrid family shares: <prefix>RMSNorm (1 + w), no 4.40 per-layer rotary.
LlamaLikeSpec hybrid_spec(const std::string& prefix);

// One layer's token mixer, inside the layer's scope: linear_attn or self_attn (gated attention:
// q_proj holds queries and their output gate, [2·heads·head_dim, hidden]; q_norm and k_norm over
// head_dim).
void token_mixer(TreeBuilder& b, const LlamaLikeSpec& s, const DecoderDims& d,
                 const LinearAttentionDims& la, InProj in_proj, bool linear);

// The model's dims: full-attention layers as decoder_model_dims has them (with `rope`), linear
// ones kRecurrent with their state, their v/k heads and head widths, and no RoPE.
ModelDims model_dims(const DecoderDims& d, const RopeDims& rope, const std::vector<bool>& linear,
                     const LinearAttentionDims& la);

}  // namespace memfit::arch::hybrid
