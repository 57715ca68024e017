// Phi-3.5-MoE (transformers models/phimoe/modeling_phimoe.py, first in 4.46; read on main):
// PhimoeModel, PhimoeForCausalLM, PhimoeForSequenceClassification (and the Hub repo's remote-code
// name PhiMoEForCausalLM, built as PhimoeForCausalLM).
//
// Mixtral's layout with LayerNorms: every norm (input_layernorm, post_attention_layernorm and the
// model's norm) is torch.nn.LayerNorm with weight and bias. q/k/v/o take attention_bias; the
// layer's block_sparse_moe = PhimoeSparseMoeBlock {gate [num_local_experts, hidden], experts.N =
// PhimoeBlockSparseTop2MLP {w1, w2, w3, act_fn}} (intermediate_size is one expert's width);
// lm_head takes lm_head_bias. One model-level rotary_emb (newer than 4.40).
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // microsoft/Phi-3.5-MoE-instruct's architectures[0] names its remote-code class; transformers'
  // own class has the same tensors.
  const std::string_view class_name = r.class_name == "PhiMoEForCausalLM" ? "PhimoeForCausalLM" : r.class_name;
  // PhimoeConfig defaults.
  DecoderDims d = read_decoder_dims(c, {32064, 4096, 6400, 32, 32, 8, 4096 * 32, false});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  d.norm_eps = read_norm_eps(c, {"rms_norm_eps"}, 1e-5);
  const std::int64_t experts = c.repeats_or({"num_local_experts"}, 16);
  LlamaLikeSpec s;
  s.prefix = "Phimoe";
  s.norm = NormKind::kLayerNorm;
  s.norm_class = "LayerNorm";
  s.rope = LegacyRope::kNone;
  s.lm_head_bias = c.flag_or({"lm_head_bias"}, false);
  TensorTree tree = build_decoder(r, class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    auto moe = b.module("block_sparse_moe", "PhimoeSparseMoeBlock");
    nn::linear(b, "gate", d.hidden, experts, false);
    mixtral_experts(b, "PhimoeBlockSparseTop2MLP", experts, d.hidden, d.inter, d.act);
  });
  if (r.dims && *r.dims)
    set_moe(**r.dims, {experts, c.count_or({"num_experts_per_tok"}, 2), 0, d.inter, 0}, false);
  return tree;
}

}  // namespace

const Family& phimoe_family() {
  static const Family f{
      "transformers",
      {"phimoe"},
      {{"PhimoeModel", "AutoModel"},
       {"PhimoeForCausalLM", "AutoModelForCausalLM"},
       {"PhimoeForSequenceClassification", "AutoModelForSequenceClassification"},
       {"PhiMoEForCausalLM", "AutoModelForCausalLM"}},
      &build};
  return f;
}

}  // namespace memfit::arch
