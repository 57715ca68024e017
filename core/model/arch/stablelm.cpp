// StableLM (transformers models/stablelm/modeling_stablelm.py, 4.40): StableLmModel,
// StableLmForCausalLM, StableLmForSequenceClassification.
//
// Llama-like gated MLP without biases, LayerNorms (with bias) instead of RMSNorm, optional
// q/k/v biases (use_qkv_bias), optional per-head bias-free q/k LayerNorms (qk_layernorm: a
// StableLmLayerNormPerHead holding `norms.<h>` for every query / key-value head), and no
// post_attention_layernorm with use_parallel_residual. In 4.40 every attention ends with a
// rotary module over int(partial_rotary_factor * head_dim) dims with cos_cached/sin_cached;
// current transformers keeps one model.rotary_emb after the final norm instead. Modules without
// tensors (4.40): the attention's attention_dropout before its rotary module, the MLP's act_fn,
// each layer's dropout after its norms; current transformers dropped attention_dropout (a float).
#include "common.h"
#include "dec_common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct StableLmDims {
  std::int64_t vocab, hidden, inter, layers, heads, kv_heads, head_dim, positions, rot_dim;
  bool qkv_bias, qk_layernorm, parallel_residual, tie;
  std::string rotary_cls, act;
};

StableLmDims read_dims(const Config& c) {
  StableLmDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 50304);
  d.hidden = c.dim_or({"hidden_size"}, 2560);
  d.inter = c.dim_or({"intermediate_size"}, 6912);
  d.layers = c.repeats_or({"num_hidden_layers"}, 32);
  d.heads = c.dim_or({"num_attention_heads"}, 32);
  d.kv_heads = c.dim_or({"num_key_value_heads"}, 32);
  d.positions = c.dim_or({"max_position_embeddings"}, 4096);
  require_divisible(c, d.hidden, "hidden_size", d.heads, "num_attention_heads");
  d.head_dim = d.hidden / d.heads;
  d.rot_dim = dec::rotary_dims(c, d.head_dim, rope_number(c, "partial_rotary_factor", 0.25),
                               "partial_rotary_factor");
  d.qkv_bias = c.flag_or({"use_qkv_bias"}, false);
  d.qk_layernorm = c.flag_or({"qk_layernorm"}, false);
  d.parallel_residual = c.flag_or({"use_parallel_residual"}, false);
  d.tie = c.flag_or({"tie_word_embeddings"}, false);
  d.rotary_cls = dec::rotary_class(c, "StableLm");
  d.act = c.string_or({"hidden_act"}, "silu");
  return d;
}

void per_head_norm(TreeBuilder& b, std::string_view name, std::int64_t dim,
                   std::int64_t heads) {
  auto s = b.module(name, "StableLmLayerNormPerHead");
  auto norms = b.module("norms", "ModuleList");
  for (std::int64_t h = 0; h < heads; ++h) nn::layer_norm(b, std::to_string(h), dim, false);
}

void decoder_layer(TreeBuilder& b, const StableLmDims& d) {
  {
    auto attn = b.module("self_attn", "StableLmAttention");
    nn::linear(b, "q_proj", d.hidden, d.heads * d.head_dim, d.qkv_bias);
    nn::linear(b, "k_proj", d.hidden, d.kv_heads * d.head_dim, d.qkv_bias);
    nn::linear(b, "v_proj", d.hidden, d.kv_heads * d.head_dim, d.qkv_bias);
    nn::linear(b, "o_proj", d.hidden, d.hidden, false);
    if (d.qk_layernorm) {
      per_head_norm(b, "q_layernorm", d.head_dim, d.heads);
      per_head_norm(b, "k_layernorm", d.head_dim, d.kv_heads);
    }
    nn::dropout(b, "attention_dropout", BufferEra::kLegacyOnly);
    dec::rotary_per_layer(b, "rotary_emb", d.rotary_cls, d.rot_dim, d.positions);
  }
  {
    auto mlp = b.module("mlp", "StableLmMLP");
    nn::linear(b, "gate_proj", d.hidden, d.inter, false);
    nn::linear(b, "up_proj", d.hidden, d.inter, false);
    nn::linear(b, "down_proj", d.inter, d.hidden, false);
    nn::activation(b, "act_fn", d.act);
  }
  nn::layer_norm(b, "input_layernorm", d.hidden);
  if (!d.parallel_residual) nn::layer_norm(b, "post_attention_layernorm", d.hidden);
  nn::dropout(b, "dropout");
}

void model(TreeBuilder& b, const StableLmDims& d) {
  nn::embedding(b, "embed_tokens", d.vocab, d.hidden);
  {
    auto layers = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto layer = b.item(i, "StableLmDecoderLayer");
      decoder_layer(b, d);
    }
  }
  nn::layer_norm(b, "norm", d.hidden);
  dec::rotary_per_model(b, "rotary_emb", "StableLmRotaryEmbedding", d.rot_dim);
}

TensorTree tree(const BuildRequest& r, const StableLmDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"StableLmDecoderLayer"});
  if (is_class(r, "StableLmModel")) {
    model(b, d);
    return b.finish();
  }
  {
    auto m = b.module("model", "StableLmModel");
    model(b, d);
  }
  if (is_class(r, "StableLmForCausalLM")) {
    if (d.tie) nn::tied_linear(b, "lm_head", "model.embed_tokens.weight");
    else nn::linear(b, "lm_head", d.hidden, d.vocab, false);
  } else {  // StableLmForSequenceClassification
    nn::linear(b, "score", d.hidden, num_labels(r.config), false);
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h). StableLmConfig (configuration_stablelm.py,
// 4.40): layer_norm_eps=1e-5.
ModelDims model_dims(const Config& c, const StableLmDims& d) {
  return uniform_model_dims(c, {d.hidden, d.vocab, d.layers, d.heads, d.kv_heads, d.head_dim,
                                d.inter, d.positions, d.tie,
                                read_norm_eps(c, {"layer_norm_eps"}, 1e-5)});
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& stablelm_family() {
  static const Family f{
      "transformers",
      {"stablelm"},
      {{"StableLmModel", "AutoModel"},
       {"StableLmForCausalLM", "AutoModelForCausalLM"},
       {"StableLmForSequenceClassification", "AutoModelForSequenceClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
