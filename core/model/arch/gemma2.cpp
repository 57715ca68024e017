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
#include "layer_types.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

// Gemma 3's per-layer attention and RoPE. Gemma3TextConfig: layer_types default to every
// sliding_window_pattern-th (6th) layer global; sliding layers rotate with
// rope_local_base_freq (10k) and no scaling, global ones with rope_theta (1M) and rope_scaling —
// transformers 5 configs write both under rope_parameters, per layer type.
void gemma3_layers(ModelDims& m, const Config& c, std::int64_t rotary_dims) {
  if (!c.has("layer_types") && !c.has("sliding_window_pattern") && c.has("sliding_window")) {
    std::vector<std::string> types;
    for (std::size_t i = 0; i < m.per_layer.size(); ++i)
      types.push_back((i + 1) % 6 ? "sliding_attention" : "full_attention");
    set_layer_kinds(m, types, c.dim({"sliding_window"}), "sliding_window_pattern (default 6)");
  }
  const RopeDims global = rope_of_type(c, "full_attention", 1e6, rotary_dims);
  RopeDims local = rope_of_type(c, "sliding_attention", 1e4, rotary_dims);
  const auto rp = c.json().find("rope_parameters");
  if (rp == c.json().end() || !rp->is_object() || !rp->contains("sliding_attention")) {
    local = RopeDims{};
    local.theta = c.number_or({"rope_local_base_freq"}, 1e4);
    local.rotary_dims = rotary_dims;
  }
  for (auto& l : m.per_layer) l.rope = l.attention == AttentionKind::kSliding ? local : global;
}

// Gemma 2's layers. Gemma2Config (transformers ≥ 4.53, configuration_gemma2.py; 4.42's
// Gemma2Attention the same): layer_types default to sliding on even layers ((i + 1) % 2) with
// sliding_window (default 4096), with or without cache_implementation "hybrid" — the general
// rule would window every layer of a config that names neither. A null window: every layer full.
void gemma2_layers(ModelDims& m, const Config& c) {
  // The general rules read these (cache_implementation "hybrid": the same pattern 2).
  if (c.has("layer_types") || c.has("sliding_window_pattern") || c.string_or({"cache_implementation"}, "") == "hybrid")
    return;
  const auto window = c.json().find("sliding_window");
  if (window != c.json().end() && window->is_null()) return;
  std::vector<std::string> types;
  for (std::size_t i = 0; i < m.per_layer.size(); ++i)
    types.push_back((i + 1) % 2 ? "sliding_attention" : "full_attention");
  set_layer_kinds(m, types, c.dim_or({"sliding_window"}, 4096), "layer_types (Gemma2Config's default: even layers)");
}

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
  TensorTree tree = build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", s.prefix + "MLP", d.hidden, d.inter, false, d.act);
  });
  if (r.dims && *r.dims && !(*r.dims)->attention_error) {
    try {
      if (gemma3) gemma3_layers(**r.dims, c, d.current_rope_dim);
      else gemma2_layers(**r.dims, c);
    } catch (const Error& e) {
      (*r.dims)->attention_error = e;  // the KV cache's error, not the estimate's
    }
  }
  return tree;
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
