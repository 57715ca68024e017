// StarCoder2 (transformers models/starcoder2/modeling_starcoder2.py, 4.40): Starcoder2Model,
// Starcoder2ForCausalLM, Starcoder2ForSequenceClassification.
//
// q/k/v/o and the MLP (c_fc [inter, hidden], c_proj [hidden, inter]) take bias=use_bias
// (default True); norms are torch.nn.LayerNorm (weight + bias); rotary copied from Mistral
// (cos_cached/sin_cached per layer in 4.40). Starcoder2Config has no tie_word_embeddings
// argument, so PretrainedConfig's default applies: tied.
// Modules without tensors follow 4.40's modeling_starcoder2.py (v4.40.0; the same today): only
// the MLP's act (hidden_act, default gelu_pytorch_tanh) after c_proj; the embedding, attention
// and residual dropouts are floats (functional dropout), not modules.
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  // Starcoder2Config defaults.
  DecoderDims d = read_decoder_dims(c, {49152, 3072, 12288, 30, 24, 2, 4096, true});
  const bool bias = c.flag_or({"use_bias"}, true);
  d.act = c.string_or({"hidden_act"}, "gelu_pytorch_tanh");
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = bias;
  LlamaLikeSpec s;
  s.prefix = "Starcoder2";
  s.norm = NormKind::kLayerNorm;
  s.norm_class = "LayerNorm";
  s.rope = LegacyRope::kPlain;
  s.rope_class = "Starcoder2RotaryEmbedding";
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    auto mlp = b.module("mlp", "Starcoder2MLP");
    nn::linear(b, "c_fc", d.hidden, d.inter, bias);
    nn::linear(b, "c_proj", d.inter, d.hidden, bias);
    nn::activation(b, "act", d.act);
  });
}

}  // namespace

const Family& starcoder2_family() {
  static const Family f{
      "transformers",
      {"starcoder2"},
      {{"Starcoder2Model", "AutoModel"},
       {"Starcoder2ForCausalLM", "AutoModelForCausalLM"},
       {"Starcoder2ForSequenceClassification", "AutoModelForSequenceClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
