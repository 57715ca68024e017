// Phi (transformers models/phi/modeling_phi.py, 4.40): PhiModel, PhiForCausalLM,
// PhiForSequenceClassification, PhiForTokenClassification.
//
// Every projection has a bias (q/k/v/dense, fc1/fc2, and the LM head); one LayerNorm per layer
// (parallel attention + MLP); optional per-head-size q/k LayerNorms (qk_layernorm). In 4.40 each
// PhiAttention ends with a rotary module over int(partial_rotary_factor * head_dim) dims with
// cos_cached/sin_cached (copied from Mistral); current transformers keeps one model.rotary_emb
// after final_layernorm instead.
// Modules without tensors follow 4.40's modeling_phi.py (v4.40.0): embed_dropout after
// embed_tokens (current transformers registers it after layers, one position only here); the
// MLP's activation_fn before fc1; each layer's resid_dropout after input_layernorm; the token
// classifier's dropout before its head. PhiAttention's attention_dropout is a float.
#include "common.h"
#include "dec_common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct PhiDims {
  std::int64_t vocab, hidden, inter, layers, heads, kv_heads, head_dim, positions, rot_dim;
  bool qk_layernorm, tie;
  std::string rotary_cls;
  std::string act;
};

PhiDims read_dims(const Config& c) {
  PhiDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 51200);
  d.hidden = c.dim_or({"hidden_size"}, 2048);
  d.inter = c.dim_or({"intermediate_size"}, 8192);
  d.layers = c.repeats_or({"num_hidden_layers"}, 24);
  d.heads = c.dim_or({"num_attention_heads"}, 32);
  d.kv_heads = c.dim_or({"num_key_value_heads"}, d.heads);
  d.positions = c.dim_or({"max_position_embeddings"}, 2048);
  require_divisible(c, d.hidden, "hidden_size", d.heads, "num_attention_heads");
  d.head_dim = d.hidden / d.heads;
  d.rot_dim = dec::rotary_dims(c, d.head_dim, rope_number(c, "partial_rotary_factor", 0.5),
                               "partial_rotary_factor");
  d.qk_layernorm = c.flag_or({"qk_layernorm"}, false);
  d.tie = c.flag_or({"tie_word_embeddings"}, false);
  d.rotary_cls = dec::rotary_class(c, "Phi");
  d.act = c.string_or({"hidden_act"}, "gelu_new");
  return d;
}

void decoder_layer(TreeBuilder& b, const PhiDims& d) {
  {
    auto attn = b.module("self_attn", "PhiAttention");
    nn::linear(b, "q_proj", d.hidden, d.heads * d.head_dim);
    nn::linear(b, "k_proj", d.hidden, d.kv_heads * d.head_dim);
    nn::linear(b, "v_proj", d.hidden, d.kv_heads * d.head_dim);
    nn::linear(b, "dense", d.heads * d.head_dim, d.hidden);
    if (d.qk_layernorm) {
      nn::layer_norm(b, "q_layernorm", d.head_dim);
      nn::layer_norm(b, "k_layernorm", d.head_dim);
    }
    dec::rotary_per_layer(b, "rotary_emb", d.rotary_cls, d.rot_dim, d.positions);
  }
  {
    auto mlp = b.module("mlp", "PhiMLP");
    nn::activation(b, "activation_fn", d.act);
    nn::linear(b, "fc1", d.hidden, d.inter);
    nn::linear(b, "fc2", d.inter, d.hidden);
  }
  nn::layer_norm(b, "input_layernorm", d.hidden);
  nn::dropout(b, "resid_dropout");
}

void model(TreeBuilder& b, const PhiDims& d) {
  nn::embedding(b, "embed_tokens", d.vocab, d.hidden);
  nn::dropout(b, "embed_dropout");
  {
    auto layers = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto layer = b.item(i, "PhiDecoderLayer");
      decoder_layer(b, d);
    }
  }
  nn::layer_norm(b, "final_layernorm", d.hidden);
  dec::rotary_per_model(b, "rotary_emb", "PhiRotaryEmbedding", d.rot_dim);
}

TensorTree tree(const BuildRequest& r, const PhiDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"PhiDecoderLayer"});
  if (is_class(r, "PhiModel")) {
    model(b, d);
    return b.finish();
  }
  {
    auto m = b.module("model", "PhiModel");
    model(b, d);
  }
  if (is_class(r, "PhiForCausalLM")) {
    if (d.tie) dec::tied_linear_with_bias(b, "lm_head", "model.embed_tokens.weight", d.vocab);
    else nn::linear(b, "lm_head", d.hidden, d.vocab, true);
  } else if (is_class(r, "PhiForSequenceClassification")) {
    nn::linear(b, "score", d.hidden, num_labels(r.config), false);
  } else {  // PhiForTokenClassification
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", d.hidden, num_labels(r.config), true);
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h). PhiConfig (configuration_phi.py, 4.40):
// layer_norm_eps=1e-5.
ModelDims model_dims(const Config& c, const PhiDims& d) {
  return uniform_model_dims(c, {d.hidden, d.vocab, d.layers, d.heads, d.kv_heads, d.head_dim,
                                d.inter, d.positions, d.tie,
                                read_norm_eps(c, {"layer_norm_eps"}, 1e-5)});
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& phi_family() {
  static const Family f{"transformers",
                        {"phi"},
                        {{"PhiModel", "AutoModel"},
                         {"PhiForCausalLM", "AutoModelForCausalLM"},
                         {"PhiForSequenceClassification", "AutoModelForSequenceClassification"},
                         {"PhiForTokenClassification", "AutoModelForTokenClassification"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
