// Gemma (transformers models/gemma/modeling_gemma.py, 4.40): GemmaModel, GemmaForCausalLM,
// GemmaForSequenceClassification.
//
// 4.40: head_dim comes from the config (default 256, not hidden/heads); q/k/v/o take
// attention_bias; GemmaRMSNorm has a weight [dim] (stored as 1 + w, same shape);
// GemmaRotaryEmbedding registers inv_freq as None (computed lazily in forward), so 4.40 has no
// rotary tensor at all; GemmaModel registers no causal_mask (4.38 did) and no normalizer buffer
// (it is computed in forward). tie_word_embeddings defaults to True.
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // GemmaConfig defaults (head_dim=256 explicit, tie_word_embeddings=True).
  DecoderDims d =
      read_decoder_dims(c, {256000, 3072, 24576, 28, 16, 16, 8192, true, /*head_dim=*/256});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  LlamaLikeSpec s;
  s.prefix = "Gemma";
  s.norm_class = "GemmaRMSNorm";
  s.rope = LegacyRope::kNone;
  s.rope_class = "GemmaRotaryEmbedding";
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", "GemmaMLP", d.hidden, d.inter, false, d.act);
  });
}

}  // namespace

const Family& gemma_family() {
  static const Family f{
      "transformers",
      {"gemma"},
      {{"GemmaModel", "AutoModel"},
       {"GemmaForCausalLM", "AutoModelForCausalLM"},
       {"GemmaForSequenceClassification", "AutoModelForSequenceClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
