// OLMo 2 (transformers models/olmo2/modular_olmo2.py, first in 4.47) and OLMoE
// (models/olmoe/modeling_olmoe.py, first in 4.45); read on main: Olmo2Model, Olmo2ForCausalLM;
// OlmoeModel, OlmoeForCausalLM.
//
// Both put an RMSNorm over the whole projection on queries and keys: q_norm [heads*head_dim],
// k_norm [kv_heads*head_dim] (OLMoE writes them as hidden_size and (hidden/heads)*kv_heads, the
// same), registered after o_proj; q/k/v/o take attention_bias; one model-level rotary_emb.
// OLMo 2 normalizes after each block instead of before: its layer registers self_attn, mlp,
// post_attention_layernorm, post_feedforward_layernorm (no input_layernorm). OLMoE keeps Llama's
// two norms; its mlp is OlmoeSparseMoeBlock {gate [num_experts, hidden], experts.N = OlmoeMLP
// (intermediate_size, one expert's width)} in every layer, no shared expert. Checkpoints store
// each expert apart; current transformers fuses them on load (same bytes).
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

LlamaLikeSpec olmo_spec(const char* prefix) {
  LlamaLikeSpec s;
  s.prefix = prefix;
  s.norm_class = std::string(prefix) + "RMSNorm";
  s.rope = LegacyRope::kNone;
  s.qk_norm = true;
  s.qk_norm_shape = QkNormShape::kAllHeads;
  return s;
}

TensorTree build_olmo2(const BuildRequest& r) {
  const Config& c = r.config;
  // Olmo2Config defaults.
  DecoderDims d = read_decoder_dims(c, {50304, 4096, 11008, 32, 32, 0, 2048, false});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  LlamaLikeSpec s = olmo_spec("Olmo2");
  s.input_norm = false;
  s.extra_layer_norms = {"post_feedforward_layernorm"};
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", "Olmo2MLP", d.hidden, d.inter, false, d.act);
  });
}

TensorTree build_olmoe(const BuildRequest& r) {
  const Config& c = r.config;
  // OlmoeConfig defaults.
  DecoderDims d = read_decoder_dims(c, {50304, 2048, 2048, 16, 16, 0, 4096, false});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  const std::int64_t experts = c.repeats_or({"num_experts"}, 64);
  TensorTree tree = build_decoder(r, r.class_name, olmo_spec("Olmoe"), d, [&](TreeBuilder& b, std::int64_t) {
    auto moe = b.module("mlp", "OlmoeSparseMoeBlock");
    nn::linear(b, "gate", d.hidden, experts, false);
    gated_experts(b, "OlmoeMLP", experts, d.hidden, d.inter, false, d.act);
  });
  if (r.dims && *r.dims)
    set_moe(**r.dims, {experts, c.count_or({"num_experts_per_tok"}, 8), 0, d.inter, 0}, false);
  return tree;
}

}  // namespace

const Family& olmo2_family() {
  static const Family f{"transformers",
                        {"olmo2"},
                        {{"Olmo2Model", "AutoModel"}, {"Olmo2ForCausalLM", "AutoModelForCausalLM"}},
                        &build_olmo2};
  return f;
}

const Family& olmoe_family() {
  static const Family f{"transformers",
                        {"olmoe"},
                        {{"OlmoeModel", "AutoModel"}, {"OlmoeForCausalLM", "AutoModelForCausalLM"}},
                        &build_olmoe};
  return f;
}

}  // namespace memfit::arch
