// Qwen2 (transformers models/qwen2/modeling_qwen2.py, 4.40): Qwen2Model, Qwen2ForCausalLM,
// Qwen2ForSequenceClassification.
//
// Qwen2Attention: q/k/v with bias, o_proj without; rotary copied from Mistral (cos_cached /
// sin_cached per layer in 4.40). tie_word_embeddings defaults to False (Qwen1.5-0.5B sets True).
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // Qwen2Config defaults: num_key_value_heads=32, max_position_embeddings=32768.
  DecoderDims d = read_decoder_dims(c, {151936, 4096, 22016, 32, 32, 32, 32768, false});
  d.q_bias = d.k_bias = d.v_bias = true;
  LlamaLikeSpec s;
  s.prefix = "Qwen2";
  s.norm_class = "Qwen2RMSNorm";
  s.rope = LegacyRope::kPlain;
  s.rope_class = "Qwen2RotaryEmbedding";
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", "Qwen2MLP", d.hidden, d.inter, false, d.act);
  });
}

}  // namespace

const Family& qwen2_family() {
  static const Family f{
      "transformers",
      {"qwen2"},
      {{"Qwen2Model", "AutoModel"},
       {"Qwen2ForCausalLM", "AutoModelForCausalLM"},
       {"Qwen2ForSequenceClassification", "AutoModelForSequenceClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
