// Mistral (transformers models/mistral/modeling_mistral.py, 5.0): Llama's block with a sliding
// window — every layer when config.sliding_window is set (create_sliding_window_causal_mask), a
// query seeing the last sliding_window keys, the cached ones included. Which layers slide and
// how wide comes from the Model's dims (core applies the config's window rules once).
#include "decoder.h"

namespace memfit::torchrt {

std::unique_ptr<ModelProgram> make_mistral(const Model& model, const TensorTree& tree) {
  return make_decoder(decoder_spec(model, tree), tree);
}

}  // namespace memfit::torchrt
