// Qwen3-MoE (transformers models/qwen3_moe/modeling_qwen3_moe.py; first in 4.51):
// Qwen3MoeModel, Qwen3MoeForCausalLM, Qwen3MoeForSequenceClassification,
// Qwen3MoeForTokenClassification.
//
// Qwen3's attention (q/k RMSNorm per head, attention_bias) with Qwen2-MoE's layer rule:
// Qwen3MoeDecoderLayer(layer_idx).mlp is Qwen3MoeSparseMoeBlock when layer_idx is not in
// mlp_only_layers and num_experts > 0 and (layer_idx + 1) % decoder_sparse_step == 0, else
// Qwen3MoeMLP(intermediate_size). The sparse block holds gate [num_experts, hidden] and
// experts.N = Qwen3MoeMLP(moe_intermediate_size), no shared expert. Checkpoints store each expert
// apart (experts.N.gate_proj/up_proj/down_proj); current transformers fuses them at load time
// into one tensor per projection, the same bytes, so the tree keeps the stored names.
#include <vector>

#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // Qwen3MoeConfig defaults.
  DecoderDims d = read_decoder_dims(c, {151936, 2048, 6144, 24, 32, 4, 32768, false, /*head_dim=*/128});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  const std::int64_t experts = c.repeats_or({"num_experts"}, 128);
  const std::int64_t moe_inter = c.dim_or({"moe_intermediate_size"}, 768);
  const std::vector<bool> sparse = qwen_moe_layers(c, d.layers, experts);
  LlamaLikeSpec s;
  s.prefix = "Qwen3Moe";
  s.norm_class = "Qwen3MoeRMSNorm";
  s.rope = LegacyRope::kNone;
  s.rope_class = "";
  s.qk_norm = true;
  TensorTree tree = build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t layer) {
    if (!sparse[static_cast<std::size_t>(layer)]) {
      gated_mlp(b, "mlp", "Qwen3MoeMLP", d.hidden, d.inter, false, d.act);
      return;
    }
    auto moe = b.module("mlp", "Qwen3MoeSparseMoeBlock");
    nn::linear(b, "gate", d.hidden, experts, false);
    gated_experts(b, "Qwen3MoeMLP", experts, d.hidden, moe_inter, false, d.act);
  });
  if (r.dims && *r.dims)
    set_moe(**r.dims, {experts, c.count_or({"num_experts_per_tok"}, 8), 0, moe_inter, 0}, true, sparse);
  return tree;
}

}  // namespace

const Family& qwen3_moe_family() {
  static const Family f{
      "transformers",
      {"qwen3_moe"},
      {{"Qwen3MoeModel", "AutoModel"},
       {"Qwen3MoeForCausalLM", "AutoModelForCausalLM"},
       {"Qwen3MoeForSequenceClassification", "AutoModelForSequenceClassification"},
       {"Qwen3MoeForTokenClassification", "AutoModelForTokenClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
