// OLMo (transformers models/olmo/modeling_olmo.py, 4.40): OlmoModel, OlmoForCausalLM.
//
// A Llama copy whose norms are OlmoLayerNorm — layer norm WITHOUT parameters (no weight, no
// bias). Attention copied from Llama (q/k/v/o take attention_bias; rotary with inv_freq and
// _cos_cached/_sin_cached in 4.40; linear/dynamic rope_scaling classes). clip_qkv only clamps
// activations. tie_word_embeddings defaults to False.
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // OlmoConfig defaults.
  DecoderDims d = read_decoder_dims(c, {50304, 4096, 11008, 32, 32, 0, 2048, false});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  LlamaLikeSpec s;
  s.prefix = "Olmo";
  s.norm = NormKind::kParamFree;
  s.norm_class = "OlmoLayerNorm";
  s.rope = LegacyRope::kUnderscore;
  s.rope_class = llama_rope_class(c, "Olmo");
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", "OlmoMLP", d.hidden, d.inter, false, d.act);
  });
}

}  // namespace

const Family& olmo_family() {
  static const Family f{"transformers",
                        {"olmo"},
                        {{"OlmoModel", "AutoModel"}, {"OlmoForCausalLM", "AutoModelForCausalLM"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
