// Mistral (transformers models/mistral/modeling_mistral.py, 4.40): MistralModel,
// MistralForCausalLM, MistralForSequenceClassification.
//
// 4.40: MistralRotaryEmbedding (one per attention layer) registers inv_freq and
// cos_cached/sin_cached [max_position_embeddings, head_dim] (no underscore, unlike Llama) and
// has no rope_scaling variants. No biases anywhere.
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // MistralConfig defaults: num_key_value_heads=8, max_position_embeddings=4096*32.
  const DecoderDims d = read_decoder_dims(c, {32000, 4096, 14336, 32, 32, 8, 4096 * 32, false});
  LlamaLikeSpec s;
  s.prefix = "Mistral";
  s.norm_class = "MistralRMSNorm";
  s.rope = LegacyRope::kPlain;
  s.rope_class = "MistralRotaryEmbedding";
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", "MistralMLP", d.hidden, d.inter, false, d.act);
  });
}

}  // namespace

const Family& mistral_family() {
  static const Family f{
      "transformers",
      {"mistral"},
      {{"MistralModel", "AutoModel"},
       {"MistralForCausalLM", "AutoModelForCausalLM"},
       {"MistralForSequenceClassification", "AutoModelForSequenceClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
