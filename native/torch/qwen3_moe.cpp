// Qwen3-MoE (transformers models/qwen3_moe/modeling_qwen3_moe.py, 5.0): Qwen3's attention; the
// layers core marks sparse (not in mlp_only_layers, every decoder_sparse_step-th) run
// Qwen3MoeSparseMoeBlock — router `mlp.gate`, softmax over all experts in float32, top
// num_experts_per_tok, divided by their sum only when norm_topk_prob (default false) — the
// others a dense Qwen3MoeMLP.
#include "decoder.h"

namespace memfit::torchrt {

std::unique_ptr<ModelProgram> make_qwen3_moe(const Model& model, const TensorTree& tree) {
  DecoderSpec spec = decoder_spec(model, tree);
  spec.qk_norm = true;
  const ModelDims& dims = program_dims(model);
  spec.moe.module = "mlp";
  spec.moe.experts = dims.experts;
  spec.moe.top_k = dims.experts_per_token;
  spec.moe.renormalize = text_config(model.config).flag_or({"norm_topk_prob"}, false);
  return make_decoder(std::move(spec), tree);
}

}  // namespace memfit::torchrt
