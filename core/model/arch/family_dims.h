// Pieces the families use to fill the model's dimensions (model_dims.h, BuildRequest::dims) from
// the reads that build their tensor tree, for the families whose layers all have one shape
// (build_decoder's Llama-shaped families too: decoder_model_dims).
//
// Nineteen of them (GPT-NeoX, Falcon, …, IDEFICS) used the generic reader (read_model_dims) before
// they filled their own dims; what they fill is what it gave on their configs
// (tests/core/test_family_dims.cpp holds them to it). Where the family's own reading would give
// another value, the generic one is kept and the family file says so (a behaviour change for
// later, not part of that move).
#pragma once

#include <cstdint>

#include "common.h"

namespace memfit::arch {

// The sizes a family reads for ModelDims' summary (model_dims.h), with its own keys and defaults.
struct UniformShape {
  std::int64_t hidden, vocab, layers, heads, kv_heads, head_dim, intermediate, max_positions;
  bool tied;
  double norm_eps;
};

// RoPE as the generic reader reads it: rope_theta (0 when absent), rope_scaling, the whole head
// rotated. Nothing reads these families' RoPE yet; their own bases and rotary widths
// (rotary_emb_base, rotary_pct, partial_rotary_factor, rotary_dim, none for learned or ALiBi
// positions) are left for a change that may alter values.
RopeDims generic_rope(const Config& c, std::int64_t head_dim);

// `s.layers` full-attention layers with s's heads and `rope`, no window rules: for families that
// set each layer's kind themselves (Qwen3-Next, gpt-oss).
ModelDims uniform_layer_dims(const UniformShape& s, const RopeDims& rope);
// The dims of a model whose `s.layers` layers are alike: full attention with s's heads and
// `rope`, then the config's window rules (model_dims.h). `c` is the (text) config.
ModelDims uniform_model_dims(const Config& c, const UniformShape& s, const RopeDims& rope);
// The same with generic_rope: the dims of the families that moved off the generic reader.
ModelDims uniform_model_dims(const Config& c, const UniformShape& s);

// Encoder-decoder (T5, BART, Whisper): uniform_model_dims of the decoder, and when
// `is_encoder_decoder` (their config classes default it to true) the encoder's layers and one
// cross-attention per decoder layer over the encoder's output, with the decoder's heads.
// `encoder_length`: the encoder's output length when the config fixes it (Whisper's
// max_source_positions), else 0.
ModelDims encoder_decoder_dims(const Config& c, const UniformShape& decoder,
                               std::int64_t encoder_layers, std::int64_t encoder_length);

// A family's build: the tree of `d` (tree(r, d)), then, when asked (BuildRequest::dims), its dims
// from the same reads (dims(r.config, d)) — filled only once the tree is built.
template <typename D, typename TreeFn, typename DimsFn>
TensorTree build_with_dims(const BuildRequest& r, const D& d, TreeFn tree, DimsFn dims) {
  TensorTree t = tree(r, d);
  if (r.dims) *r.dims = dims(r.config, d);
  return t;
}

}  // namespace memfit::arch
