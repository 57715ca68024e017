// Phi-3 (transformers models/phi3/modeling_phi3.py, 4.40): Phi3Model, Phi3ForCausalLM,
// Phi3ForSequenceClassification, Phi3ForTokenClassification.
//
// 4.40: Phi3Attention registers o_proj [hidden, q] BEFORE the fused qkv_proj
// [q + 2 * kv, hidden] (no biases); Phi3MLP has gate_up_proj [2 * inter, hidden] and down_proj.
// Every 4.40 Phi-3 rotary class (Phi3RotaryEmbedding, Phi3SuScaledRotaryEmbedding for "su",
// Phi3YarnScaledRotaryEmbedding for "yarn") registers inv_freq as None: no 4.40 buffer. Current
// transformers has one model-level inv_freq (partial_rotary_factor honoured). Dropouts have no
// tensors, but they are modules: embed_dropout after embed_tokens, resid_attn_dropout and
// resid_mlp_dropout after each input_layernorm (4.40's order), and the MLP's activation_fn.
// The token-classification head is named `classifier` (with bias).
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

std::string rope_class(const Config& c) {
  const std::string type = rope_scaling_type(c);
  // "longrope" is the later name of "su".
  if (type == "su" || type == "longrope") return "Phi3SuScaledRotaryEmbedding";
  if (type == "yarn") return "Phi3YarnScaledRotaryEmbedding";
  return "Phi3RotaryEmbedding";
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // Phi3Config defaults.
  const DecoderDims d = read_decoder_dims(c, {32064, 3072, 8192, 32, 32, 0, 4096, false});
  LlamaLikeSpec s;
  s.prefix = "Phi3";
  s.norm_class = "Phi3RMSNorm";
  s.fused_qkv = true;
  s.rope = LegacyRope::kNone;
  s.rope_class = rope_class(c);
  s.token_head = "classifier";
  s.embed_dropout = "embed_dropout";
  s.layer_dropouts = {"resid_attn_dropout", "resid_mlp_dropout"};
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    fused_gated_mlp(b, "mlp", "Phi3MLP", d.hidden, d.inter, d.act);
  });
}

}  // namespace

const Family& phi3_family() {
  static const Family f{
      "transformers",
      {"phi3"},
      {{"Phi3Model", "AutoModel"},
       {"Phi3ForCausalLM", "AutoModelForCausalLM"},
       {"Phi3ForSequenceClassification", "AutoModelForSequenceClassification"},
       {"Phi3ForTokenClassification", "AutoModelForTokenClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
