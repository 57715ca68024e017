// Phi-3 (transformers models/phi3/modeling_phi3.py, 5.0): Llama's block with the fused
// qkv_proj [q | k | v] and gate_up_proj (gate first, then up; down_proj(up * act(gate))),
// partial rotary (partial_rotary_factor: the first dims of each head rotate), LongRoPE (rope_type
// "longrope", formerly "su") with the top-level original_max_position_embeddings, and a sliding
// window over every layer when config.sliding_window is set.
#include "decoder.h"

namespace memfit::torchrt {

std::unique_ptr<ModelProgram> make_phi3(const Model& model, const TensorTree& tree) {
  DecoderSpec spec = decoder_spec(model, tree);
  spec.fused_qkv = true;
  for (DecoderLayerSpec& l : spec.layers) l.mlp = MlpKind::kFusedGated;
  return make_decoder(std::move(spec), tree);
}

}  // namespace memfit::torchrt
