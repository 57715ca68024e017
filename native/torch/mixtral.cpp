// Mixtral (transformers models/mixtral/modeling_mixtral.py, 5.0): Mistral's attention (sliding
// window when set) and in every layer block_sparse_moe — MixtralTopKRouter: softmax over all
// num_local_experts in float32, top num_experts_per_tok, always divided by their sum; each expert
// w2(act(w1(x)) * w3(x)), as the checkpoints store them (experts.N.w1/w2/w3).
#include "decoder.h"

namespace memfit::torchrt {

std::unique_ptr<ModelProgram> make_mixtral(const Model& model, const TensorTree& tree) {
  DecoderSpec spec = decoder_spec(model, tree);
  spec.moe.module = "block_sparse_moe";
  spec.moe.gate = "w1";
  spec.moe.up = "w3";
  spec.moe.down = "w2";
  spec.moe.renormalize = true;
  // Every Mixtral layer routes (core's dims say dense when the top-k is 0: make_decoder names it).
  for (DecoderLayerSpec& l : spec.layers) l.mlp = MlpKind::kMoe;
  set_router(spec, model, tree);
  return make_decoder(std::move(spec), tree);
}

}  // namespace memfit::torchrt
