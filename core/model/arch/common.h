// Pieces shared by several architecture files (kept here so no family copies another).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/error.h"
#include "memfit/model/arch.h"
#include "memfit/model/config.h"
#include "memfit/model/nn_layers.h"
#include "memfit/model/tree_builder.h"

namespace memfit::arch {

// A rotary-embedding module as transformers 4.40 registers it inside each attention layer:
// inv_freq [rot_dim/2] (float32, non-persistent, still allocated today, but per model instead of
// per layer — so it is marked legacy here) and, when cos_name is non-empty, the cos/sin caches
// [max_positions, rot_dim] in float32 (4.40 only).
void legacy_rotary(TreeBuilder& b, std::string_view name, std::string_view cls,
                   std::int64_t rot_dim, std::int64_t max_positions,
                   std::string_view cos_name = "_cos_cached",
                   std::string_view sin_name = "_sin_cached");

// The model-level rotary embedding of current transformers: one inv_freq [rot_dim/2].
void current_rotary(TreeBuilder& b, std::string_view name, std::string_view cls,
                    std::int64_t rot_dim);

// head_dim as transformers computes it: explicit `head_dim` if present, else hidden / heads,
// which must divide exactly.
std::int64_t head_dim(const Config& c, std::int64_t hidden, std::int64_t heads);

// num_labels for *ForSequenceClassification heads: `num_labels`, else len(id2label), else 2.
std::int64_t num_labels(const Config& c);

// An encoder attention module of four [dim, dim] projections (with bias unless `bias` is false),
// registered in the order `names` lists them: CLIP and SigLIP k_proj, v_proj, q_proj, out_proj;
// Llama 4's vision tower q_proj, k_proj, v_proj, o_proj.
void square_attention(TreeBuilder& b, std::string_view cls, const std::array<const char*, 4>& names,
                      std::int64_t dim, bool bias = true);

// The CLIP-style MLP module `mlp`: activation_fn (a module of class `act_class`), fc1 [inter, dim]
// and fc2 [dim, inter], with bias.
void fc_mlp(TreeBuilder& b, std::string_view cls, std::int64_t dim, std::int64_t inter,
            std::string_view act_class);

// A pre-norm encoder ("encoder" = <P>Encoder {layers.N = <P>EncoderLayer}) in CLIP's registration
// order: self_attn (<P>Attention, k/v/q/out_proj with bias), layer_norm1, mlp (<P>MLP, fc_mlp),
// layer_norm2. CLIP's towers and Idefics2's vision transformer (MiniCPM-V's tower) share it.
void clip_style_encoder(TreeBuilder& b, std::string_view prefix, std::int64_t hidden,
                        std::int64_t inter, std::int64_t layers, std::string_view act);

// Throws kInvalidValue naming the keys when `a % b != 0`.
void require_divisible(const Config& c, std::int64_t a, const char* a_key, std::int64_t b,
                       const char* b_key);

}  // namespace memfit::arch

namespace memfit::arch {

// transformers 5 moves rope_theta, rope_type and partial_rotary_factor into `rope_parameters`
// (configs saved by 4.x keep them at the top level, with `rope_scaling`): the key from
// `rope_parameters` (its full_attention entry when keyed by layer type: rope_parameters_of) when
// it is there, else from the top level, else `fallback`. RoPE itself: model_dims.h's read_rope,
// which reads both layouts.
double rope_number(const Config& c, const char* key, double fallback);
// rope_scaling's "type" (or "rope_type"), else transformers 5's rope_parameters' rope_type
// ("default" giving ""); "" when neither says.
std::string rope_scaling_type(const Config& c);

// `layer_types`, checked to hold one entry per layer (kInvalidValue naming both keys); nullopt
// when the config has none.
std::optional<std::vector<std::string>> layer_types(const Config& c, std::int64_t layers);

}  // namespace memfit::arch
