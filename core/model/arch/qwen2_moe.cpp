// Qwen2-MoE (transformers models/qwen2_moe/modeling_qwen2_moe.py, 4.40): Qwen2MoeModel,
// Qwen2MoeForCausalLM, Qwen2MoeForSequenceClassification.
//
// Qwen2MoeDecoderLayer(layer_idx).mlp is Qwen2MoeSparseMoeBlock when
//   layer_idx not in mlp_only_layers and num_experts > 0 and (layer_idx + 1) % decoder_sparse_step == 0
// else Qwen2MoeMLP(intermediate_size). The sparse block registers, in order: gate [num_experts,
// hidden], experts.N = Qwen2MoeMLP(moe_intermediate_size), shared_expert =
// Qwen2MoeMLP(shared_expert_intermediate_size), shared_expert_gate [1, hidden]; no biases.
// Attention as Qwen2 (q/k/v bias); rotary copied from Mistral (cos_cached/sin_cached in 4.40).
// Modules without tensors, per 4.40's modeling_qwen2_moe.py (v4.40.0): only every Qwen2MoeMLP's
// act_fn (hidden_act, added by gated_mlp); attention_dropout is a float, not a module.
#include <vector>

#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // Qwen2MoeConfig defaults.
  DecoderDims d = read_decoder_dims(c, {151936, 2048, 5632, 24, 16, 16, 32768, false});
  d.q_bias = d.k_bias = d.v_bias = true;
  const std::int64_t experts = c.repeats_or({"num_experts"}, 60);
  const std::int64_t moe_inter = c.dim_or({"moe_intermediate_size"}, 1408);
  const std::int64_t shared_inter = c.dim_or({"shared_expert_intermediate_size"}, 5632);
  const std::vector<bool> sparse = qwen_moe_layers(c, d.layers, experts);
  LlamaLikeSpec s;
  s.prefix = "Qwen2Moe";
  s.norm_class = "Qwen2MoeRMSNorm";
  s.rope = LegacyRope::kPlain;
  s.rope_class = "Qwen2MoeRotaryEmbedding";
  TensorTree tree = build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t layer) {
    if (!sparse[static_cast<std::size_t>(layer)]) {
      gated_mlp(b, "mlp", "Qwen2MoeMLP", d.hidden, d.inter, false, d.act);
      return;
    }
    qwen_sparse_moe(b, "Qwen2Moe", d, experts, moe_inter, shared_inter);
  });
  if (r.dims && *r.dims)
    set_moe(**r.dims, {experts, c.count_or({"num_experts_per_tok"}, 4), 1, moe_inter, shared_inter}, true, sparse);
  return tree;
}

}  // namespace

const Family& qwen2_moe_family() {
  static const Family f{
      "transformers",
      {"qwen2_moe"},
      {{"Qwen2MoeModel", "AutoModel"},
       {"Qwen2MoeForCausalLM", "AutoModelForCausalLM"},
       {"Qwen2MoeForSequenceClassification", "AutoModelForSequenceClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
