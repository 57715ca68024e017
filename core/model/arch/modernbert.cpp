// ModernBERT (transformers models/modernbert/modeling_modernbert.py, generated from
// modular_modernbert.py, first in 4.48; read on main): ModernBertModel, ModernBertForMaskedLM,
// ModernBertForSequenceClassification, ModernBertForTokenClassification.
//
// ModernBertModel registers embeddings {tok_embeddings [vocab, hidden], norm (LayerNorm,
// bias=norm_bias), drop}, layers.N, final_norm, rotary_emb (one inv_freq buffer per layer type:
// full_attention_inv_freq with global_rope_theta, sliding_attention_inv_freq with
// local_rope_theta, each [head_dim/2], non-persistent). A layer: attn_norm (nn.Identity in layer 0,
// else LayerNorm), attn {Wqkv [3*hidden, hidden], Wo [hidden, hidden] (bias=attention_bias),
// out_drop (Dropout when attention_dropout > 0, else Identity)}; its flash-attention-only rotary
// is None otherwise and not built here), mlp_norm, mlp {Wi [2*intermediate, hidden], act, drop,
// Wo [hidden, intermediate] (bias=mlp_bias)}. Layer i attends globally when
// i % global_attn_every_n_layers == 0, else within local_attention tokens (±local_attention/2).
// The heads: head = ModernBertPredictionHead {dense [hidden, hidden] (bias=classifier_bias), act
// (classifier_activation), norm}; ForMaskedLM adds decoder (weight tied to tok_embeddings, bias
// decoder_bias), the classifiers drop and classifier [num_labels, hidden] (with bias).
#include "families.h"
#include "common.h"

namespace memfit::arch {
namespace {

struct BertDims {
  std::int64_t vocab, hidden, inter, layers, heads, positions, global_every, local_window;
  bool norm_bias, attn_bias, mlp_bias, attn_dropout;
  std::string act;
};

// ModernBertConfig defaults.
BertDims read_dims(const Config& c) {
  BertDims d;
  d.vocab = c.dim_or({"vocab_size"}, 50368);
  d.hidden = c.dim_or({"hidden_size"}, 768);
  d.inter = c.dim_or({"intermediate_size"}, 1152);
  d.layers = c.repeats_or({"num_hidden_layers"}, 22);
  d.heads = c.dim_or({"num_attention_heads"}, 12);
  require_divisible(c, d.hidden, "hidden_size", d.heads, "num_attention_heads");
  d.positions = c.dim_or({"max_position_embeddings"}, 8192);
  d.global_every = c.dim_or({"global_attn_every_n_layers"}, 3);
  d.local_window = c.dim_or({"local_attention"}, 128);
  d.norm_bias = c.flag_or({"norm_bias"}, false);
  d.attn_bias = c.flag_or({"attention_bias"}, false);
  d.mlp_bias = c.flag_or({"mlp_bias"}, false);
  d.attn_dropout = c.number_or({"attention_dropout"}, 0.0) > 0.0;
  d.act = c.string_or({"hidden_activation"}, "gelu");
  return d;
}

void layer(TreeBuilder& b, const BertDims& d, std::int64_t i) {
  auto l = b.item(i, "ModernBertEncoderLayer");
  if (i == 0) b.stateless("attn_norm", "Identity");
  else nn::layer_norm(b, "attn_norm", d.hidden, d.norm_bias);
  {
    auto attn = b.module("attn", "ModernBertAttention");
    nn::linear(b, "Wqkv", d.hidden, 3 * d.hidden, d.attn_bias);
    nn::linear(b, "Wo", d.hidden, d.hidden, d.attn_bias);
    if (d.attn_dropout) nn::dropout(b, "out_drop");
    else b.stateless("out_drop", "Identity");
  }
  nn::layer_norm(b, "mlp_norm", d.hidden, d.norm_bias);
  auto mlp = b.module("mlp", "ModernBertMLP");
  nn::linear(b, "Wi", d.hidden, 2 * d.inter, d.mlp_bias);
  nn::activation(b, "act", d.act);
  nn::dropout(b, "drop");
  nn::linear(b, "Wo", d.inter, d.hidden, d.mlp_bias);
}

void base_model(TreeBuilder& b, const BertDims& d) {
  {
    auto e = b.module("embeddings", "ModernBertEmbeddings");
    nn::embedding(b, "tok_embeddings", d.vocab, d.hidden);
    nn::layer_norm(b, "norm", d.hidden, d.norm_bias);
    nn::dropout(b, "drop");
  }
  {
    auto list = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) layer(b, d, i);
  }
  nn::layer_norm(b, "final_norm", d.hidden, d.norm_bias);
  auto r = b.module("rotary_emb", "ModernBertRotaryEmbedding");
  const std::int64_t half = (d.hidden / d.heads + 1) / 2;
  b.buffer("full_attention_inv_freq", {half}, DType::kF32, false, BufferEra::kCurrentOnly);
  if (d.layers > 1 && d.global_every > 1)
    b.buffer("sliding_attention_inv_freq", {half}, DType::kF32, false, BufferEra::kCurrentOnly);
}

void prediction_head(TreeBuilder& b, const Config& c, const BertDims& d) {
  auto h = b.module("head", "ModernBertPredictionHead");
  nn::linear(b, "dense", d.hidden, d.hidden, c.flag_or({"classifier_bias"}, false));
  nn::activation(b, "act", c.string_or({"classifier_activation"}, "gelu"));
  nn::layer_norm(b, "norm", d.hidden, d.norm_bias);
}

ModelDims model_dims(const Config& c, const BertDims& d) {
  ModelDims m;
  m.hidden = d.hidden;
  m.vocab = d.vocab;
  m.layers = d.layers;
  m.max_positions = d.positions;
  m.tied_embeddings = c.flag_or({"tie_word_embeddings"}, true);
  m.norm_eps = read_norm_eps(c, {"norm_eps"}, 1e-5);
  m.heads = m.kv_heads = d.heads;
  m.head_dim = d.hidden / d.heads;
  m.intermediate = d.inter;
  set_uniform_layers(m, read_rope(c, c.number_or({"global_rope_theta"}, 160000.0), m.head_dim));
  for (std::size_t i = 0; i < m.per_layer.size(); ++i) {
    if (static_cast<std::int64_t>(i) % d.global_every == 0) continue;
    LayerDims& l = m.per_layer[i];
    l.attention = AttentionKind::kSliding;
    l.window = d.local_window;
    l.rope.theta = c.number_or({"local_rope_theta"}, 10000.0);
  }
  m.window_rule = "global_attn_every_n_layers";
  return m;
}

TensorTree build(const BuildRequest& r) {
  const Config& c = r.config;
  const BertDims d = read_dims(c);
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"ModernBertEmbeddings", "ModernBertEncoderLayer"});
  if (r.class_name == "ModernBertModel") {
    base_model(b, d);
  } else {
    {
      auto m = b.module("model", "ModernBertModel");
      base_model(b, d);
    }
    prediction_head(b, c, d);
    if (r.class_name == "ModernBertForMaskedLM") {
      auto dec = b.module("decoder", "Linear");
      if (c.flag_or({"tie_word_embeddings"}, true)) b.tied_param("weight", "model.embeddings.tok_embeddings.weight");
      else b.param("weight", {d.vocab, d.hidden});
      if (c.flag_or({"decoder_bias"}, true)) b.param("bias", {d.vocab});
    } else {
      nn::dropout(b, "drop");
      nn::linear(b, "classifier", d.hidden, num_labels(c), true);
    }
  }
  if (r.dims) *r.dims = model_dims(c, d);
  return b.finish();
}

}  // namespace

const Family& modernbert_family() {
  static const Family f{
      "transformers",
      {"modernbert"},
      {{"ModernBertModel", "AutoModel"},
       {"ModernBertForMaskedLM", "AutoModelForMaskedLM"},
       {"ModernBertForSequenceClassification", "AutoModelForSequenceClassification"},
       {"ModernBertForTokenClassification", "AutoModelForTokenClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
