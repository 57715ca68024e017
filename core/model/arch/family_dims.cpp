#include "family_dims.h"

namespace memfit::arch {

RopeDims generic_rope(const Config& c, std::int64_t head_dim) { return read_rope(c, 0, head_dim); }

ModelDims uniform_layer_dims(const UniformShape& s, const RopeDims& rope) {
  ModelDims d;
  d.hidden = s.hidden;
  d.vocab = s.vocab;
  d.layers = s.layers;
  d.max_positions = s.max_positions;
  d.tied_embeddings = s.tied;
  d.norm_eps = s.norm_eps;
  d.heads = s.heads;
  d.kv_heads = s.kv_heads;
  d.head_dim = s.head_dim;
  d.intermediate = s.intermediate;
  set_uniform_layers(d, rope);
  return d;
}

ModelDims uniform_model_dims(const Config& c, const UniformShape& s, const RopeDims& rope) {
  ModelDims d = uniform_layer_dims(s, rope);
  apply_window_rules(d, c);
  return d;
}

ModelDims uniform_model_dims(const Config& c, const UniformShape& s) {
  return uniform_model_dims(c, s, generic_rope(c, s.head_dim));
}

ModelDims encoder_decoder_dims(const Config& c, const UniformShape& decoder,
                               std::int64_t encoder_layers, std::int64_t encoder_length) {
  ModelDims d = uniform_model_dims(c, decoder);
  d.encoder_decoder = c.flag_or({"is_encoder_decoder"}, true);
  if (!d.encoder_decoder) return d;
  d.encoder_layers = encoder_layers;
  d.cross.layers = d.layers;
  d.cross.kv_heads = d.heads;
  d.cross.head_dim = d.head_dim;
  d.cross.default_encoder_length = encoder_length;
  return d;
}

}  // namespace memfit::arch
