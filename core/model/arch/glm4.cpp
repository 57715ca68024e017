// GLM-4-0414 (transformers models/glm4/modular_glm4.py, first in 4.51; read on main):
// Glm4Model, Glm4ForCausalLM, Glm4ForSequenceClassification, Glm4ForTokenClassification.
//
// GlmAttention (from Llama): q_proj, k_proj, v_proj with bias=attention_bias (default true),
// o_proj without bias; head_dim from the config (default 128); RoPE over head_dim *
// partial_rotary_factor (default 0.5). Glm4MLP is Phi-3's: gate_up_proj [2*inter, hidden],
// down_proj [hidden, inter], activation_fn. Glm4DecoderLayer registers self_attn, mlp,
// input_layernorm, post_attention_layernorm, post_self_attn_layernorm, post_mlp_layernorm.
// One model-level rotary_emb; the family is newer than 4.40, so no per-layer rotary.
//
// GLM-4.5 / GLM-4.6 (transformers models/glm4_moe/modular_glm4_moe.py, first in 4.54; read on
// main): Glm4MoeModel, Glm4MoeForCausalLM.
//
// Glm4MoeAttention: q_proj, k_proj, v_proj (bias=attention_bias), o_proj (no bias), then
// q_norm / k_norm over head_dim when use_qk_norm; head_dim from the config (default 128), RoPE
// over head_dim * partial_rotary_factor (default 0.5). Layer i's mlp is Glm4MoeMoE when
// i >= first_k_dense_replace, else Glm4MoeMLP(intermediate_size); the MoE block is DeepSeek-V3's
// as transformers writes it (deepseek_layers.h): experts, gate = Glm4MoeTopkRouter {weight,
// e_score_correction_bias (float32 buffer)}, shared_experts. Layers: self_attn, mlp,
// input_layernorm, post_attention_layernorm; one model-level rotary_emb.
// Not loaded: the multi-token-prediction layer after the last (num_nextn_predict_layers: for
// GLM-4.5-Air model.layers.46.*, GLM-4.5 model.layers.92.* — _keys_to_ignore_on_load_unexpected).
#include "deepseek_layers.h"
#include "families.h"

namespace memfit::arch {
namespace {

// Both configuration classes: head_dim default 128, RoPE over half of it unless
// partial_rotary_factor says otherwise, biases on q/k/v only.
DecoderDims glm_dims(const Config& c, const DecoderDefaults& defaults, bool bias_default) {
  DecoderDims d = read_decoder_dims(c, defaults);
  if (!c.has("partial_rotary_factor")) d.current_rope_dim = d.head_dim / 2;
  d.q_bias = d.k_bias = d.v_bias = c.flag_or({"attention_bias"}, bias_default);
  return d;
}

TensorTree build_glm4(const BuildRequest& r) {
  // Glm4Config defaults.
  const DecoderDims d = glm_dims(r.config, {151552, 4096, 13696, 40, 32, 2, 131072, false, /*head_dim=*/128}, true);
  LlamaLikeSpec s;
  s.prefix = "Glm4";
  s.norm_class = "Glm4RMSNorm";
  s.rope = LegacyRope::kNone;
  s.extra_layer_norms = {"post_self_attn_layernorm", "post_mlp_layernorm"};
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    fused_gated_mlp(b, "mlp", "Glm4MLP", d.hidden, d.inter, d.act);
  });
}

TensorTree build_glm4_moe(const BuildRequest& r) {
  const Config& c = r.config;
  // Glm4MoeConfig defaults.
  const DecoderDims d = glm_dims(c, {151552, 4096, 10944, 46, 96, 8, 131072, false, /*head_dim=*/128}, false);
  DeepseekMoeSpec moe;
  moe.prefix = "Glm4Moe";
  moe.router_class = "Glm4MoeTopkRouter";
  moe.score_bias = moe.score_bias_buffer = true;
  moe.routed = c.repeats_or({"n_routed_experts"}, 128);
  moe.shared = c.repeats_or({"n_shared_experts"}, 1);
  moe.width = c.dim_or({"moe_intermediate_size"}, 1408);
  moe.active = c.count_or({"num_experts_per_tok"}, 8);
  const std::vector<bool> sparse = deepseek_moe_layers(c, d.layers, 1);
  LlamaLikeSpec s;
  s.prefix = "Glm4Moe";
  s.norm_class = "Glm4MoeRMSNorm";
  s.rope = LegacyRope::kNone;
  s.qk_norm = c.flag_or({"use_qk_norm"}, false);
  TensorTree tree = build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t layer) {
    if (sparse[static_cast<std::size_t>(layer)]) return deepseek_moe(b, moe, d.hidden, d.act);
    gated_mlp(b, "mlp", "Glm4MoeMLP", d.hidden, d.inter, false, d.act);
  });
  // Glm4MoePreTrainedModel inherits DeepseekV3PreTrainedModel's strict keep list.
  keep_score_bias_fp32(tree, /*stored_fp32=*/false);
  if (r.dims && *r.dims)
    set_moe(**r.dims, {moe.routed, moe.active, moe.shared, moe.width, moe.shared * moe.width}, true, sparse);
  return tree;
}

}  // namespace

const Family& glm4_family() {
  static const Family f{
      "transformers",
      {"glm4"},
      {{"Glm4Model", "AutoModel"},
       {"Glm4ForCausalLM", "AutoModelForCausalLM"},
       {"Glm4ForSequenceClassification", "AutoModelForSequenceClassification"},
       {"Glm4ForTokenClassification", "AutoModelForTokenClassification"}},
      &build_glm4};
  return f;
}

const Family& glm4_moe_family() {
  static const Family f{"transformers",
                        {"glm4_moe"},
                        {{"Glm4MoeModel", "AutoModel"}, {"Glm4MoeForCausalLM", "AutoModelForCausalLM"}},
                        &build_glm4_moe};
  return f;
}

}  // namespace memfit::arch
