// Llama (transformers models/llama/modeling_llama.py: 4.40, which made the golden checkpoints, and
// 5.0 for RoPE scaling) through the shared decoder: RMSNorm in float32, rotate_half RoPE with
// every rope_type of rope.h (linear, dynamic, llama3, yarn, longrope), GQA, SwiGLU MLP (hidden_act),
// attention_bias / mlp_bias when the checkpoint has the biases, separate or tied lm_head.
#include "decoder.h"

namespace memfit::torchrt {

std::unique_ptr<ModelProgram> make_llama(const Model& model, const TensorTree& tree) {
  return make_decoder(decoder_spec(model, tree), tree);
}

}  // namespace memfit::torchrt
