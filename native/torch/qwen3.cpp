// Qwen3 (transformers models/qwen3/modeling_qwen3.py, 5.0): Qwen2's layout without the q/k/v
// biases (attention_bias applies to all four when set) and with q_norm / k_norm, a
// Qwen3RMSNorm(head_dim) on each query and key head after the projection, before RoPE.
#include "decoder.h"

namespace memfit::torchrt {

std::unique_ptr<ModelProgram> make_qwen3(const Model& model, const TensorTree& tree) {
  DecoderSpec spec = decoder_spec(model, tree);
  spec.qk_norm = true;
  return make_decoder(std::move(spec), tree);
}

}  // namespace memfit::torchrt
