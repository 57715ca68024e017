// GPT-NeoX (transformers models/gpt_neox/modeling_gpt_neox.py, 4.40): GPTNeoXModel,
// GPTNeoXForCausalLM, GPTNeoXForSequenceClassification, GPTNeoXForTokenClassification,
// GPTNeoXForQuestionAnswering.
//
// 4.40 registers, in every GPTNeoXAttention and before its linears: a bool causal mask `bias`
// [1, 1, P, P], a float32 scalar `masked_bias`, and a rotary module (inv_freq, cos_cached,
// sin_cached over int(head_size * rotary_pct) dims). Current transformers has none of these per
// layer and one `gpt_neox.rotary_emb.inv_freq` after final_layer_norm instead.
// Modules without tensors as 4.40 registers them: emb_dropout after embed_in; each layer's
// post_attention_dropout and post_mlp_dropout after its norms; the attention's
// attention_dropout (a float in current transformers) after dense; the MLP's act.
#include "common.h"
#include "dec_common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct NeoxDims {
  std::int64_t vocab, hidden, layers, heads, inter, positions, rot_dim;
  bool attention_bias, parallel_residual, tie;
  std::string rotary_cls, act;
};

NeoxDims read_dims(const Config& c) {
  NeoxDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 50432);
  d.hidden = c.dim_or({"hidden_size"}, 6144);
  d.layers = c.repeats_or({"num_hidden_layers"}, 44);
  d.heads = c.dim_or({"num_attention_heads"}, 64);
  d.inter = c.dim_or({"intermediate_size"}, 24576);
  d.positions = c.dim_or({"max_position_embeddings"}, 2048);
  require_divisible(c, d.hidden, "hidden_size", d.heads, "num_attention_heads");
  // Current transformers renamed rotary_pct to partial_rotary_factor.
  d.rot_dim = dec::rotary_dims(c, d.hidden / d.heads,
                               c.has("rotary_pct") ? c.number_or({"rotary_pct"}, 0.25)
                                                   : rope_number(c, "partial_rotary_factor", 0.25),
                               "rotary_pct");
  d.attention_bias = c.flag_or({"attention_bias"}, true);
  d.parallel_residual = c.flag_or({"use_parallel_residual"}, true);
  d.tie = c.flag_or({"tie_word_embeddings"}, false);
  d.rotary_cls = dec::rotary_class(c, "GPTNeoX");
  d.act = c.string_or({"hidden_act"}, "gelu");
  return d;
}

void attention(TreeBuilder& b, const NeoxDims& d) {
  auto s = b.module("attention", "GPTNeoXAttention");
  b.buffer("bias", {1, 1, d.positions, d.positions}, DType::kBool, false,
           BufferEra::kLegacyOnly);
  b.buffer("masked_bias", {}, DType::kF32, false, BufferEra::kLegacyOnly);
  dec::rotary_per_layer(b, "rotary_emb", d.rotary_cls, d.rot_dim, d.positions);
  nn::linear(b, "query_key_value", d.hidden, 3 * d.hidden, d.attention_bias);
  nn::linear(b, "dense", d.hidden, d.hidden, d.attention_bias);
  nn::dropout(b, "attention_dropout", BufferEra::kLegacyOnly);
}

void model(TreeBuilder& b, const NeoxDims& d) {
  nn::embedding(b, "embed_in", d.vocab, d.hidden);
  nn::dropout(b, "emb_dropout");
  {
    auto layers = b.module("layers", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto layer = b.item(i, "GPTNeoXLayer");
      // use_parallel_residual changes only the forward pass: both norms always exist.
      nn::layer_norm(b, "input_layernorm", d.hidden);
      nn::layer_norm(b, "post_attention_layernorm", d.hidden);
      nn::dropout(b, "post_attention_dropout");
      nn::dropout(b, "post_mlp_dropout");
      attention(b, d);
      auto mlp = b.module("mlp", "GPTNeoXMLP");
      nn::linear(b, "dense_h_to_4h", d.hidden, d.inter);
      nn::linear(b, "dense_4h_to_h", d.inter, d.hidden);
      nn::activation(b, "act", d.act);
    }
  }
  nn::layer_norm(b, "final_layer_norm", d.hidden);
  dec::rotary_per_model(b, "rotary_emb", "GPTNeoXRotaryEmbedding", d.rot_dim);
}

TensorTree tree(const BuildRequest& r, const NeoxDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"GPTNeoXLayer"});
  if (is_class(r, "GPTNeoXModel")) {
    model(b, d);
    return b.finish();
  }
  {
    auto m = b.module("gpt_neox", "GPTNeoXModel");
    model(b, d);
  }
  if (is_class(r, "GPTNeoXForCausalLM")) {
    if (d.tie) nn::tied_linear(b, "embed_out", "gpt_neox.embed_in.weight");
    else nn::linear(b, "embed_out", d.hidden, d.vocab, false);
  } else if (is_class(r, "GPTNeoXForSequenceClassification")) {
    nn::linear(b, "score", d.hidden, num_labels(r.config), false);
  } else if (is_class(r, "GPTNeoXForTokenClassification")) {
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", d.hidden, num_labels(r.config), true);
  } else {  // GPTNeoXForQuestionAnswering
    nn::linear(b, "qa_outputs", d.hidden, 2, true);
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h). GPTNeoXConfig (configuration_gpt_neox.py,
// 4.40): layer_norm_eps=1e-5; every head has its own key and value.
ModelDims model_dims(const Config& c, const NeoxDims& d) {
  return uniform_model_dims(c, {d.hidden, d.vocab, d.layers, d.heads, d.heads, d.hidden / d.heads,
                                d.inter, d.positions, d.tie,
                                read_norm_eps(c, {"layer_norm_eps"}, 1e-5)});
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& gpt_neox_family() {
  static const Family f{
      "transformers",
      {"gpt_neox"},
      {{"GPTNeoXModel", "AutoModel"},
       {"GPTNeoXForCausalLM", "AutoModelForCausalLM"},
       {"GPTNeoXForSequenceClassification", "AutoModelForSequenceClassification"},
       {"GPTNeoXForTokenClassification", "AutoModelForTokenClassification"},
       {"GPTNeoXForQuestionAnswering", "AutoModelForQuestionAnswering"}},
      &build};
  return f;
}

}  // namespace memfit::arch
