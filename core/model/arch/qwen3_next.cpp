// Qwen3-Next (transformers models/qwen3_next/modular_qwen3_next.py and configuration_qwen3_next.py,
// main after 5.0; first in 4.57): Qwen3NextModel, Qwen3NextForCausalLM,
// Qwen3NextForSequenceClassification, Qwen3NextForTokenClassification.
//
// The hybrid layer of qwen_hybrid.h with Qwen3-Next's fused DeltaNet projections (in_proj_qkvz,
// in_proj_ba) and Qwen2-MoE's sparse block: Qwen3NextDecoderLayer(layer_idx).mlp is
// Qwen3NextSparseMoeBlock (gate, experts, shared_expert, shared_expert_gate) when layer_idx is
// not in mlp_only_layers and num_experts > 0 and (layer_idx + 1) % decoder_sparse_step == 0,
// else Qwen3NextMLP(intermediate_size). Checkpoints (saved by 4.57) store each expert apart,
// experts.N.{gate,up,down}_proj.weight; transformers 5 fuses them at load into experts.gate_up_proj
// [E, 2·moe_inter, hidden] and experts.down_proj [E, hidden, moe_inter], the same bytes, so the
// tree keeps the stored names. Checkpoints also carry multi-token-prediction layers (`mtp.*`),
// which Qwen3NextPreTrainedModel._keys_to_ignore_on_load_unexpected drops: not in the tree.
#include <vector>

#include "families.h"
#include "qwen_hybrid.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // Qwen3NextConfig defaults.
  const DecoderDims d =
      hybrid::read_text_dims(c, {151936, 2048, 5632, 48, 16, 2, 32768, false, /*head_dim=*/256});
  const hybrid::LinearAttentionDims la = hybrid::read_linear_attention(c);
  const std::vector<bool> linear = hybrid::linear_layers(c, d.layers);
  const std::int64_t experts = c.repeats_or({"num_experts"}, 512);
  const std::int64_t moe_inter = c.dim_or({"moe_intermediate_size"}, 512);
  const std::int64_t shared_inter = c.dim_or({"shared_expert_intermediate_size"}, 512);
  const std::vector<bool> sparse = qwen_moe_layers(c, d.layers, experts);
  const LlamaLikeSpec s = hybrid::hybrid_spec("Qwen3Next");
  const BuildRequest tree_only{r.config, r.class_name, r.model_name, nullptr};
  TensorTree tree = build_decoder(
      tree_only, r.class_name, s, d,
      [&](TreeBuilder& b, std::int64_t layer) {
        if (sparse[static_cast<std::size_t>(layer)])
          qwen_sparse_moe(b, "Qwen3Next", d, experts, moe_inter, shared_inter);
        else
          gated_mlp(b, "mlp", "Qwen3NextMLP", d.hidden, d.inter, false, d.act);
      },
      [&](TreeBuilder& b, std::int64_t layer) {
        hybrid::token_mixer(b, s, d, la, hybrid::InProj::kFused, linear[static_cast<std::size_t>(layer)]);
      });
  if (r.dims) {
    *r.dims = hybrid::model_dims(d, read_rope(c, 10000.0, d.current_rope_dim), linear, la);
    set_moe(**r.dims, {experts, c.count_or({"num_experts_per_tok"}, 10), 1, moe_inter, shared_inter},
            true, sparse);
  }
  return tree;
}

}  // namespace

const Family& qwen3_next_family() {
  static const Family f{
      "transformers",
      {"qwen3_next"},
      {{"Qwen3NextModel", "AutoModel"},
       {"Qwen3NextForCausalLM", "AutoModelForCausalLM"},
       {"Qwen3NextForSequenceClassification", "AutoModelForSequenceClassification"},
       {"Qwen3NextForTokenClassification", "AutoModelForTokenClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
