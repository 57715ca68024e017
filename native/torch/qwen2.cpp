// Qwen2 (transformers models/qwen2/modeling_qwen2.py, 5.0): Llama's block with biases on q/k/v
// (o_proj without), read from the checkpoint; sliding layers from use_sliding_window +
// max_window_layers, as core's dims give them.
#include "decoder.h"

namespace memfit::torchrt {

std::unique_ptr<ModelProgram> make_qwen2(const Model& model, const TensorTree& tree) {
  return make_decoder(decoder_spec(model, tree), tree);
}

}  // namespace memfit::torchrt
