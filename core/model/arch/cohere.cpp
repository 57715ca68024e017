// Cohere Command R / R+ and Command R7B / A (transformers models/cohere/modeling_cohere.py,
// first in 4.39, and models/cohere2/modular_cohere2.py, first in 4.48; read on main):
// CohereModel, CohereForCausalLM; Cohere2Model, Cohere2ForCausalLM. The tree is current
// transformers' (one model-level rotary_emb); 4.40's per-layer rotary module is not modelled.
//
// A parallel block: attention and MLP both read input_layernorm's output, so a layer registers
// self_attn, mlp, input_layernorm and no post_attention_layernorm. CohereLayerNorm has a weight
// and no bias. q/k/v/o take attention_bias; head_dim = hidden / heads; tied embeddings by
// default. Cohere's use_qk_norm adds q_norm / k_norm = CohereLayerNorm((heads, head_dim)) after
// o_proj, weight [heads, head_dim] and [kv_heads, head_dim]. Cohere2 has no q/k norms and
// alternates sliding and full layers: layer_types, else sliding_window_pattern (default 4:
// every 4th layer full); its sliding layers use RoPE, its full layers none (NoPE).
#include "families.h"
#include "llama_like.h"

namespace memfit::arch {
namespace {

DecoderDims cohere_dims(const Config& c) {
  // CohereConfig / Cohere2Config defaults.
  DecoderDims d = read_decoder_dims(c, {256000, 8192, 22528, 40, 64, 0, 8192, true});
  d.q_bias = d.k_bias = d.v_bias = d.o_bias = c.flag_or({"attention_bias"}, false);
  d.norm_eps = read_norm_eps(c, {"layer_norm_eps"}, 1e-5);
  return d;
}

LlamaLikeSpec cohere_spec(const char* prefix) {
  LlamaLikeSpec s;
  s.prefix = prefix;
  s.norm_class = std::string(prefix) + "LayerNorm";
  s.rope = LegacyRope::kNone;
  s.post_attention_norm = false;
  s.qk_norm_shape = QkNormShape::kHeadsByDim;
  return s;
}

TensorTree build(const BuildRequest& r, const char* prefix, bool qk_norm) {
  const DecoderDims d = cohere_dims(r.config);
  LlamaLikeSpec s = cohere_spec(prefix);
  s.qk_norm = qk_norm;
  const std::string mlp_class = std::string(prefix) + "MLP";
  return build_decoder(r, r.class_name, s, d, [&](TreeBuilder& b, std::int64_t) {
    gated_mlp(b, "mlp", mlp_class, d.hidden, d.inter, false, d.act);
  });
}

TensorTree build_cohere(const BuildRequest& r) {
  return build(r, "Cohere", r.config.flag_or({"use_qk_norm"}, false));
}

// Cohere2Config builds layer_types from sliding_window_pattern (default 4) when the config has
// neither: the shared window rules would otherwise window every layer.
void cohere2_windows(const Config& c, ModelDims& dims) {
  if (!c.has("layer_types") && !c.has("sliding_window_pattern") && !dims.attention_error) {
    const std::int64_t window = c.dim_or({"sliding_window"}, 4096);
    for (std::size_t i = 0; i < dims.per_layer.size(); ++i) {
      LayerDims& l = dims.per_layer[i];
      const bool sliding = (i + 1) % 4 != 0;
      l.attention = sliding ? AttentionKind::kSliding : AttentionKind::kFull;
      l.window = sliding ? window : 0;
    }
    dims.window_rule = "sliding_window_pattern";
  }
  for (LayerDims& l : dims.per_layer)
    if (l.attention == AttentionKind::kFull) l.rope = RopeDims{};  // NoPE
}

TensorTree build_cohere2(const BuildRequest& r) {
  TensorTree tree = build(r, "Cohere2", false);
  if (r.dims && *r.dims) cohere2_windows(r.config, **r.dims);
  return tree;
}

}  // namespace

const Family& cohere_family() {
  static const Family f{"transformers",
                        {"cohere"},
                        {{"CohereModel", "AutoModel"}, {"CohereForCausalLM", "AutoModelForCausalLM"}},
                        &build_cohere};
  return f;
}

const Family& cohere2_family() {
  static const Family f{"transformers",
                        {"cohere2"},
                        {{"Cohere2Model", "AutoModel"}, {"Cohere2ForCausalLM", "AutoModelForCausalLM"}},
                        &build_cohere2};
  return f;
}

}  // namespace memfit::arch
