// Gemma 1, 2 and 3 (transformers 5.0 models/gemma/modeling_gemma.py, models/gemma2/modeling_gemma2.py,
// models/gemma3/modeling_gemma3.py; Gemma 3 text only) through the shared decoder:
// - embeddings × sqrt(hidden_size) in the hidden dtype (GemmaModel's normalizer; Gemma 3's
//   Gemma3TextScaledWordEmbedding, the same product);
// - GemmaRMSNorm: normalize in float32, × (1 + w) in float32, then cast;
// - GeGLU: hidden_activation (default gelu_pytorch_tanh, the tanh approximation);
// - Gemma 2/3: post_attention_layernorm on the attention output before the residual, and
//   pre/post_feedforward_layernorm around the MLP; scores scaled by query_pre_attn_scalar^-0.5;
//   attn_logit_softcapping on the scores and final_logit_softcapping on the logits
//   (cap·tanh(x/cap); Gemma 2 defaults 50 and 30, Gemma 3 none; null turns them off);
// - Gemma 2: layers alternate sliding (even) / global (odd) unless layer_types says otherwise;
// - Gemma 3: q_norm / k_norm per head, sliding layers from layer_types / sliding_window_pattern
//   rotating with rope_local_base_freq, global ones with rope_theta and its scaling (core's dims).
// gemma3 (the vision-language config) runs its language model: language_model.model.* as its
// checkpoints store it, the text_config's numbers.
#include "decoder.h"

#include "memfit/model/config.h"

namespace memfit::torchrt {
namespace {

// A Gemma 2/3 config number that may be null (transformers' None): absent → `fallback`, null → 0.
double nullable(const Config& c, const char* key, double fallback) {
  const auto it = c.json().find(key);
  if (it == c.json().end()) return fallback;
  return it->is_number() ? it->get<double>() : 0;
}

DecoderSpec gemma_spec(const Model& model, const TensorTree& tree) {
  DecoderSpec spec = decoder_spec(model, tree);
  const Config c = text_config(model.config);
  spec.norm = NormStyle::kGemma;
  spec.embed_scale = true;
  spec.act = activation(c.string_or({"hidden_activation"}, "gelu_pytorch_tanh"), model.config.where());
  return spec;
}

// Gemma 2 and 3: the sandwich norms and the query scale; the caps with the family's defaults.
DecoderSpec gemma2_spec(const Model& model, const TensorTree& tree, double attn_cap, double final_cap) {
  DecoderSpec spec = gemma_spec(model, tree);
  const Config c = text_config(model.config);
  spec.sandwich_norms = true;
  spec.score_scale_dim = c.number_or({"query_pre_attn_scalar"}, 256);
  spec.attn_softcap = nullable(c, "attn_logit_softcapping", attn_cap);
  spec.final_softcap = nullable(c, "final_logit_softcapping", final_cap);
  return spec;
}

}  // namespace

std::unique_ptr<ModelProgram> make_gemma(const Model& model, const TensorTree& tree) {
  return make_decoder(gemma_spec(model, tree), tree);
}

std::unique_ptr<ModelProgram> make_gemma2(const Model& model, const TensorTree& tree) {
  DecoderSpec spec = gemma2_spec(model, tree, 50.0, 30.0);
  const Config c = text_config(model.config);
  // Gemma2Config: layer_types default to sliding for even layers (4.42: `not bool(layer_idx % 2)`).
  if (!c.has("layer_types")) {
    const auto window = static_cast<std::int64_t>(nullable(c, "sliding_window", 4096));
    for (std::size_t i = 0; i < spec.layers.size(); ++i) spec.layers[i].window = i % 2 == 0 ? window : 0;
  }
  return make_decoder(std::move(spec), tree);
}

std::unique_ptr<ModelProgram> make_gemma3(const Model& model, const TensorTree& tree) {
  DecoderSpec spec = gemma2_spec(model, tree, 0, 0);
  spec.qk_norm = true;
  return make_decoder(std::move(spec), tree);
}

}  // namespace memfit::torchrt
