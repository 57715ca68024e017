// Pieces shared by the decoder-only families of transformers 4.40 that keep per-attention rotary
// caches and fused-QKV layouts (gpt_neox, falcon, phi, stablelm, gptj, opt, ...).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common.h"

namespace memfit::arch::dec {

// Python's int(head_dim * factor) (truncation of the IEEE product, as transformers computes the
// rotary width of partial-rotary models).
std::int64_t rotary_dims(const Config& c, std::int64_t head_dim, double factor,
                         const char* factor_key);

// The class transformers 4.40 picks for a per-attention rotary embedding from `rope_scaling`:
// "<prefix>RotaryEmbedding", "<prefix>LinearScalingRotaryEmbedding" (type "linear") or
// "<prefix>DynamicNTKScalingRotaryEmbedding" (type "dynamic"). Shapes do not depend on it.
std::string rotary_class(const Config& c, std::string_view prefix);

// A 4.40 rotary module inside one attention layer (copied from Llama/Mistral before 4.41):
// inv_freq = 1/base^(arange(0, dim, 2)/dim) has ceil(dim/2) entries; cos_cached and sin_cached
// are [max_positions, 2*ceil(dim/2)] float32. All three are non-persistent and gone from current
// transformers (which keeps one inv_freq per model), hence kLegacyOnly.
void rotary_per_layer(TreeBuilder& b, std::string_view name, std::string_view cls,
                      std::int64_t rot_dim, std::int64_t max_positions);

// The model-level rotary module of current transformers: inv_freq [ceil(dim/2)] (kCurrentOnly).
void rotary_per_model(TreeBuilder& b, std::string_view name, std::string_view cls,
                      std::int64_t rot_dim);

// torch.nn.LayerNorm(elementwise_affine=False): a module with no tensors.
void layer_norm_no_affine(TreeBuilder& b, std::string_view name);

// An nn.Linear whose weight is tied to `target_weight` but which keeps its own bias [out].
void tied_linear_with_bias(TreeBuilder& b, std::string_view name, const std::string& target_weight,
                           std::int64_t out);

}  // namespace memfit::arch::dec
