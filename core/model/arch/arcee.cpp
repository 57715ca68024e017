// Arcee (transformers models/arcee/modular_arcee.py, first in 4.54; read on main): ArceeModel and
// its heads — the AFM models. Llama's modules and layout, except the MLP: Nemotron's, up_proj and
// down_proj without a gate, around the config's activation (relu2 by default).
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // ArceeConfig(): vocab_size=32000, hidden_size=2560, intermediate_size=18432, 32 layers,
  // 32 heads (KV heads: the heads), max_position_embeddings=4096, tie_word_embeddings=False,
  // hidden_act="relu2".
  DecoderDims d = read_decoder_dims(c, {32000, 2560, 18432, 32, 32, 0, 4096, false});
  d.act = c.string_or({"hidden_act"}, "relu2");
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  const bool mlp_bias = c.flag_or({"mlp_bias"}, false);
  LlamaLikeSpec s;
  s.prefix = "Arcee";
  s.norm_class = "ArceeRMSNorm";
  s.rope = LegacyRope::kNone;
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gateless_mlp(b, "mlp", "ArceeMLP", d.hidden, d.inter, mlp_bias, d.act);
  });
}

}  // namespace

const Family& arcee_family() {
  static const Family f{
      "transformers",
      {"arcee"},
      {{"ArceeModel", "AutoModel"},
       {"ArceeForCausalLM", "AutoModelForCausalLM"},
       {"ArceeForSequenceClassification", "AutoModelForSequenceClassification"},
       {"ArceeForTokenClassification", "AutoModelForTokenClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
