// Nemotron (transformers models/nemotron/modeling_nemotron.py, first in 4.44; read on main):
// NemotronModel and its heads — Nemotron-4 and the Minitron models. Llama's layout with
// NemotronLayerNorm1P norms (LayerNorms: weight and bias), a gateless MLP (up_proj, down_proj,
// relu2) and RoPE over partial_rotary_factor of each head (0.5 by default).
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // NemotronConfig(): vocab_size=256000, hidden_size=6144, intermediate_size=24576, 32 layers,
  // 48 heads, max_position_embeddings=4096, tie_word_embeddings=False, hidden_act="relu2",
  // partial_rotary_factor=0.5.
  DecoderDims d = read_decoder_dims(c, {256000, 6144, 24576, 32, 48, 0, 4096, false});
  d.act = c.string_or({"hidden_act"}, "relu2");
  if (!c.has("partial_rotary_factor")) d.current_rope_dim = d.head_dim / 2;
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  const bool mlp_bias = c.flag_or({"mlp_bias"}, false);
  LlamaLikeSpec s;
  s.prefix = "Nemotron";
  s.norm_class = "NemotronLayerNorm1P";
  s.norm = NormKind::kLayerNorm;
  s.rope = LegacyRope::kNone;
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gateless_mlp(b, "mlp", "NemotronMLP", d.hidden, d.inter, mlp_bias, d.act);
  });
}

}  // namespace

const Family& nemotron_family() {
  static const Family f{
      "transformers",
      {"nemotron"},
      {{"NemotronModel", "AutoModel"},
       {"NemotronForCausalLM", "AutoModelForCausalLM"},
       {"NemotronForSequenceClassification", "AutoModelForSequenceClassification"},
       {"NemotronForTokenClassification", "AutoModelForTokenClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
