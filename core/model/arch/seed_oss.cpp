// Seed-OSS (transformers models/seed_oss/modular_seed_oss.py, first in 4.56; read on main):
// SeedOssModel and its heads. Llama's modules and layout; the attention's q/k/v carry a bias
// (attention_bias, default true) and o_proj its own flag (attention_out_bias, default false);
// residual_dropout is a float, not a module.
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // SeedOssConfig(): vocab_size=155136, hidden_size=4096, intermediate_size=27648, 64 layers,
  // 80 heads, 8 KV heads, head_dim=128, max_position_embeddings=524288, tie_word_embeddings=False.
  DecoderDims d = read_decoder_dims(c, {155136, 4096, 27648, 64, 80, 8, 524288, false, 128});
  d.q_bias = d.k_bias = d.v_bias = c.flag_or({"attention_bias"}, true);
  d.o_bias = c.flag_or({"attention_out_bias"}, false);
  const bool mlp_bias = c.flag_or({"mlp_bias"}, false);
  LlamaLikeSpec s;
  s.prefix = "SeedOss";
  s.norm_class = "SeedOssRMSNorm";
  s.rope = LegacyRope::kNone;
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", "SeedOssMLP", d.hidden, d.inter, mlp_bias, d.act);
  });
}

}  // namespace

const Family& seed_oss_family() {
  static const Family f{
      "transformers",
      {"seed_oss"},
      {{"SeedOssModel", "AutoModel"},
       {"SeedOssForCausalLM", "AutoModelForCausalLM"},
       {"SeedOssForSequenceClassification", "AutoModelForSequenceClassification"},
       {"SeedOssForTokenClassification", "AutoModelForTokenClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
