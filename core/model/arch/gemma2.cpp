// Gemma 2 and Gemma 3's text model (transformers models/gemma2/modeling_gemma2.py, first in
// 4.42; models/gemma3/modeling_gemma3.py, first in 4.50): Gemma2Model, Gemma2ForCausalLM,
// Gemma2ForSequenceClassification, Gemma2ForTokenClassification; Gemma3TextModel,
// Gemma3ForCausalLM (model_type gemma3_text).
//
// Gemma's layout (GeGLU MLP, (1 + w) RMSNorm, head_dim 256, tied embeddings) with four norms
// per layer: input_layernorm, post_attention_layernorm, pre_feedforward_layernorm,
// post_feedforward_layernorm, registered in that order after self_attn and mlp. Gemma 3 adds a
// per-head q_norm and k_norm after o_proj, and scales embeddings through
// Gemma3TextScaledWordEmbedding, whose embed_scale is a non-persistent scalar buffer. Neither
// family has a per-layer rotary module; current transformers keeps one model-level rotary_emb
// (Gemma 3 a second, rotary_emb_local, for its sliding layers). Which layers slide
// (sliding_window, layer_types / sliding_window_pattern) is the KV cache's business, not the
// tree's: every layer holds the same tensors.
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r, bool gemma3) {
  const Config& c = r.config;
  // Gemma2Config / Gemma3TextConfig defaults.
  DecoderDims d = read_decoder_dims(
      c, {gemma3 ? 262208 : 256000, 2304, 9216, 26, 8, 4, gemma3 ? 131072 : 8192, true, /*head_dim=*/256});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  d.act = c.string_or({"hidden_activation", "hidden_act"}, "gelu_pytorch_tanh");
  LlamaLikeSpec s;
  s.prefix = gemma3 ? "Gemma3" : "Gemma2";
  s.norm_class = gemma3 ? "Gemma3RMSNorm" : "Gemma2RMSNorm";
  s.rope = LegacyRope::kNone;
  s.rope_class = "";
  s.qk_norm = gemma3;
  s.extra_layer_norms = {"pre_feedforward_layernorm", "post_feedforward_layernorm"};
  if (gemma3) {
    s.embedding_class = "Gemma3TextScaledWordEmbedding";
    s.embed_scale_buffer = true;
    s.base_class = "Gemma3TextModel";
    s.local_rotary = true;
  }
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", s.prefix + "MLP", d.hidden, d.inter, false, d.act);
  });
}

TensorTree build_gemma2(const BuildRequest& r) { return build(r, false); }
TensorTree build_gemma3_text(const BuildRequest& r) { return build(r, true); }

}  // namespace

const Family& gemma2_family() {
  static const Family f{
      "transformers",
      {"gemma2"},
      {{"Gemma2Model", "AutoModel"},
       {"Gemma2ForCausalLM", "AutoModelForCausalLM"},
       {"Gemma2ForSequenceClassification", "AutoModelForSequenceClassification"},
       {"Gemma2ForTokenClassification", "AutoModelForTokenClassification"}},
      &build_gemma2};
  return f;
}

const Family& gemma3_text_family() {
  static const Family f{"transformers",
                        {"gemma3_text"},
                        {{"Gemma3TextModel", "AutoModel"}, {"Gemma3ForCausalLM", "AutoModelForCausalLM"}},
                        &build_gemma3_text};
  return f;
}

}  // namespace memfit::arch
