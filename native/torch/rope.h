// native/torch/rope.h — rotary position embeddings for every RoPE family: the inverse
// frequencies and attention factor of each rope_type (transformers' modeling_rope_utils), the
// cos/sin tables of a forward's positions, and their application to queries and keys.
//
// Followed: transformers 5.0 src/transformers/modeling_rope_utils.py (_compute_*_parameters,
// dynamic_rope_update) and modeling_llama.py (LlamaRotaryEmbedding.forward, apply_rotary_pos_emb;
// Phi-3's partial rotary). "linear" divides the positions, as 4.40's
// LlamaLinearScalingRotaryEmbedding did, which the golden RoPE-scaled Llama was made with
// (current transformers divides inv_freq instead: the same product up to rounding).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "memfit/model/model_dims.h"

namespace memfit::torchrt {

// One rotary embedding as transformers builds it from the config.
struct RopeSpec {
  RopeDims dims;                        // theta, rope_type, factor, params, LongRoPE lists
  std::int64_t head_dim = 0;            // rotary dims when dims.rotary_dims is 0
  std::int64_t max_positions = 0;       // config.max_position_embeddings
  // config.original_max_position_embeddings at the top level (Phi-3's LongRoPE reads it there);
  // 0 when absent.
  std::int64_t original_max_positions = 0;
  std::string where;                    // config path, for messages

  std::int64_t dim() const { return dims.rotary_dims > 0 ? dims.rotary_dims : head_dim; }
};

// inv_freq [dim/2] float32 (CPU) and the attention factor cos/sin are multiplied by, for a
// forward whose last position is seq_len − 1 (dynamic and LongRoPE depend on it). Throws
// Failure(kUnsupported) naming an unknown rope_type, Failure(kInvalidInput) naming a missing or
// bad parameter.
std::pair<at::Tensor, double> rope_inv_freq(const RopeSpec& rope, std::int64_t seq_len);

// Checks what rope_inv_freq needs, once, when the program is built: the same errors.
void check_rope(const RopeSpec& rope);

struct RopeTables {
  at::Tensor cos, sin;  // [T, dim] float32 on the forward's device
};

// cos/sin for positions past … past+T−1 (LlamaRotaryEmbedding.forward: float32 inv_freq ⊗
// float32 positions, cat(freqs, freqs), × attention factor).
RopeTables rope_tables(const RopeSpec& rope, std::int64_t past, std::int64_t T, const at::Device& device);

// apply_rotary_pos_emb on x [B, heads, T, head_dim]: the first `dim` dims rotated (rotate_half),
// the rest passed through (partial rotary).
at::Tensor apply_rope(const at::Tensor& x, const RopeTables& t);

}  // namespace memfit::torchrt
