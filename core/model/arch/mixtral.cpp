// Mixtral (transformers models/mixtral/modeling_mixtral.py, 4.40): MixtralModel,
// MixtralForCausalLM, MixtralForSequenceClassification.
//
// Each MixtralDecoderLayer: self_attn (Mistral's, cos_cached/sin_cached rotary),
// block_sparse_moe = MixtralSparseMoeBlock {gate [num_local_experts, hidden], experts.N =
// MixtralBlockSparseTop2MLP {w1 [ffn, hidden], w2 [hidden, ffn], w3 [ffn, hidden]}}, then the
// two RMSNorms. (Current transformers fuses the experts into 3-D tensors under other names; the
// element count is the same, the names here are the checkpoints'.)
// Modules without tensors follow 4.40's modeling_mixtral.py (v4.40.0): each expert's act_fn
// (hidden_act) after w3, kept in both eras like the experts' checkpoint names (current
// transformers has one experts.act_fn); attention_dropout is a float, not a module.
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  const DecoderDims d = read_decoder_dims(c, {32000, 4096, 14336, 32, 32, 8, 4096 * 32, false});
  const std::int64_t experts = c.repeats_or({"num_local_experts"}, 8);
  LlamaLikeSpec s;
  s.prefix = "Mixtral";
  s.norm_class = "MixtralRMSNorm";
  s.rope = LegacyRope::kPlain;
  s.rope_class = "MixtralRotaryEmbedding";
  TensorTree tree = build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    auto moe = b.module("block_sparse_moe", "MixtralSparseMoeBlock");
    nn::linear(b, "gate", d.hidden, experts, false);
    mixtral_experts(b, "MixtralBlockSparseTop2MLP", experts, d.hidden, d.inter, d.act);
  });
  // Every layer's experts are as wide as the dense MLP would be.
  if (r.dims && *r.dims)
    set_moe(**r.dims, {experts, c.count_or({"num_experts_per_tok"}, 2), 0, d.inter, 0}, false);
  return tree;
}

}  // namespace

const Family& mixtral_family() {
  static const Family f{
      "transformers",
      {"mixtral"},
      {{"MixtralModel", "AutoModel"},
       {"MixtralForCausalLM", "AutoModelForCausalLM"},
       {"MixtralForSequenceClassification", "AutoModelForSequenceClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
