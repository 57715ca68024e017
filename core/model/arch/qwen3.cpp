// Qwen3 (transformers models/qwen3/modeling_qwen3.py; the family first appeared in 4.51):
// Qwen3Model, Qwen3ForCausalLM, Qwen3ForSequenceClassification, Qwen3ForTokenClassification,
// Qwen3ForQuestionAnswering.
//
// Qwen2's layout without the q/k/v biases (attention_bias, default false, applies to all four
// projections) and with a per-head RMSNorm over head_dim on queries and keys: Qwen3Attention
// registers q_proj, k_proj, v_proj, o_proj, q_norm, k_norm. One model-level rotary_emb (no
// per-layer rotary: transformers 4.40 has no Qwen3, so compat mode builds the same modules).
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // Qwen3Config defaults (head_dim 128 explicit).
  DecoderDims d = read_decoder_dims(c, {151936, 4096, 22016, 32, 32, 32, 32768, false, /*head_dim=*/128});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  LlamaLikeSpec s;
  s.prefix = "Qwen3";
  s.norm_class = "Qwen3RMSNorm";
  s.rope = LegacyRope::kNone;
  s.rope_class = "";
  s.qk_norm = true;
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", "Qwen3MLP", d.hidden, d.inter, false, d.act);
  });
}

}  // namespace

const Family& qwen3_family() {
  static const Family f{
      "transformers",
      {"qwen3"},
      {{"Qwen3Model", "AutoModel"},
       {"Qwen3ForCausalLM", "AutoModelForCausalLM"},
       {"Qwen3ForSequenceClassification", "AutoModelForSequenceClassification"},
       {"Qwen3ForTokenClassification", "AutoModelForTokenClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
