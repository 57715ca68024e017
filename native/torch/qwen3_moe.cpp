// Qwen3-MoE (transformers models/qwen3_moe/modeling_qwen3_moe.py, 5.0): Qwen3's attention; the
// layers core's tree makes sparse (not in mlp_only_layers, every decoder_sparse_step-th) run
// Qwen3MoeSparseMoeBlock — router `mlp.gate`, softmax over all experts in float32, top
// num_experts_per_tok, divided by their sum only when norm_topk_prob (default false) — the
// others a dense Qwen3MoeMLP.
#include "decoder.h"

namespace memfit::torchrt {

std::unique_ptr<ModelProgram> make_qwen3_moe(const Model& model, const TensorTree& tree) {
  DecoderSpec spec = decoder_spec(model, tree);
  spec.qk_norm = true;
  spec.moe.module = "mlp";
  spec.moe.renormalize = text_config(model.config).flag_or({"norm_topk_prob"}, false);
  // The sparse layers are those whose tree holds the router (core's rule: mlp_only_layers,
  // decoder_sparse_step), whatever top-k the config gives them.
  for (std::size_t i = 0; i < spec.layers.size(); ++i)
    spec.layers[i].mlp = tree.find_tensor(spec.base + "layers." + std::to_string(i) + ".mlp.gate.weight") >= 0
                             ? MlpKind::kMoe
                             : MlpKind::kGated;
  set_router(spec, model, tree);
  return make_decoder(std::move(spec), tree);
}

}  // namespace memfit::torchrt
