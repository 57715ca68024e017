// Falcon (transformers models/falcon/modeling_falcon.py, 4.40): FalconModel, FalconForCausalLM,
// FalconForSequenceClassification, FalconForTokenClassification, FalconForQuestionAnswering.
// Also the pre-integration model_types "RefinedWebModel" (falcon-7b style) and "RefinedWeb"
// (falcon-40b style, always the new decoder architecture), read with their n_head / n_layer /
// n_head_kv keys and described with the in-library Falcon classes.
//
// Attention: one fused FalconLinear query_key_value whose width depends on the layout —
// new_decoder_architecture: (heads + 2*num_kv_heads)*head_dim; multi_query: hidden + 2*head_dim;
// else 3*hidden. Rotary models (alibi false) carry, in 4.40, a rotary module per attention layer
// registered before the linears (inv_freq, cos_cached, sin_cached over head_dim); current
// transformers has one transformer.rotary_emb after ln_f instead (registered even for ALiBi).
// Modules without tensors follow 4.40's modeling_falcon.py (v4.40.0; the same today): the
// attention's attention_dropout after dense; the MLP's act (config "activation", default "gelu")
// between dense_h_to_4h and dense_4h_to_h; the token classifier's dropout before classifier.
//
// Note: accelerate builds falcon-7b/40b as FalconForSequenceClassification, because the first
// AutoModelFor* key of their config's auto_map is AutoModelForSequenceClassification.
#include <fmt/format.h>

#include "common.h"
#include "dec_common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct FalconDims {
  std::int64_t vocab, hidden, layers, heads, kv_heads, head_dim, positions, ffn, qkv_out;
  bool new_arch, multi_query, parallel_attn, bias, alibi, split_ln, tie;
  std::string rotary_cls;
  std::string act;
};

FalconDims read_dims(const Config& c) {
  FalconDims d{};
  const std::string model_type = c.string_or({"model_type"}, "falcon");
  d.vocab = c.dim_or({"vocab_size"}, 65024);
  d.hidden = c.dim_or({"n_embed", "hidden_size"}, 4544);
  d.layers = c.repeats_or({"n_layer", "num_hidden_layers"}, 32);
  d.heads = c.dim_or({"n_head", "num_attention_heads"}, 71);
  d.kv_heads = c.dim_or({"num_kv_heads", "n_head_kv"}, d.heads);
  d.positions = c.dim_or({"max_position_embeddings"}, 2048);
  d.new_arch = c.flag_or({"new_decoder_architecture"}, model_type == "RefinedWeb");
  d.multi_query = c.flag_or({"multi_query"}, true);
  d.parallel_attn = c.flag_or({"parallel_attn"}, true);
  d.bias = c.flag_or({"bias"}, false);
  d.alibi = c.flag_or({"alibi"}, false);
  d.tie = c.flag_or({"tie_word_embeddings"}, true);
  require_divisible(c, d.hidden, "hidden_size", d.heads, "num_attention_heads");
  d.head_dim = d.hidden / d.heads;
  if (d.new_arch) d.qkv_out = (d.heads + 2 * d.kv_heads) * d.head_dim;
  else if (d.multi_query) d.qkv_out = d.hidden + 2 * d.head_dim;
  else d.qkv_out = 3 * d.hidden;
  // ffn_hidden_size and num_ln_in_parallel_attn (Falcon2) arrived after 4.40; their defaults
  // (4*hidden, and two norms for the new architecture) give the 4.40 layout.
  d.ffn = c.dim_or({"ffn_hidden_size"}, 4 * d.hidden);
  d.split_ln = d.new_arch && c.dim_or({"num_ln_in_parallel_attn"}, 2) == 2;
  d.rotary_cls = dec::rotary_class(c, "Falcon");
  d.act = c.string_or({"activation"}, "gelu");
  return d;
}

void decoder_layer(TreeBuilder& b, const FalconDims& d) {
  {
    auto attn = b.module("self_attention", "FalconAttention");
    if (!d.alibi)
      dec::rotary_per_layer(b, "rotary_emb", d.rotary_cls, d.head_dim, d.positions);
    nn::linear(b, "query_key_value", d.hidden, d.qkv_out, d.bias, "FalconLinear");
    nn::linear(b, "dense", d.hidden, d.hidden, d.bias, "FalconLinear");
    nn::dropout(b, "attention_dropout");
  }
  {
    auto mlp = b.module("mlp", "FalconMLP");
    nn::linear(b, "dense_h_to_4h", d.hidden, d.ffn, d.bias, "FalconLinear");
    nn::activation(b, "act", d.act);
    nn::linear(b, "dense_4h_to_h", d.ffn, d.hidden, d.bias, "FalconLinear");
  }
  if (d.split_ln) {
    nn::layer_norm(b, "ln_attn", d.hidden);
    nn::layer_norm(b, "ln_mlp", d.hidden);
  } else {
    nn::layer_norm(b, "input_layernorm", d.hidden);
    if (!d.new_arch && !d.parallel_attn) nn::layer_norm(b, "post_attention_layernorm", d.hidden);
  }
}

void model(TreeBuilder& b, const FalconDims& d) {
  nn::embedding(b, "word_embeddings", d.vocab, d.hidden);
  {
    auto h = b.module("h", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto layer = b.item(i, "FalconDecoderLayer");
      decoder_layer(b, d);
    }
  }
  nn::layer_norm(b, "ln_f", d.hidden);
  dec::rotary_per_model(b, "rotary_emb", "FalconRotaryEmbedding", d.head_dim);
}

TensorTree tree(const BuildRequest& r, const FalconDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"FalconDecoderLayer"});
  if (is_class(r, "FalconModel")) {
    model(b, d);
    return b.finish();
  }
  {
    auto t = b.module("transformer", "FalconModel");
    model(b, d);
  }
  if (is_class(r, "FalconForCausalLM")) {
    if (d.tie) nn::tied_linear(b, "lm_head", "transformer.word_embeddings.weight");
    else nn::linear(b, "lm_head", d.hidden, d.vocab, false);
  } else if (is_class(r, "FalconForSequenceClassification")) {
    nn::linear(b, "score", d.hidden, num_labels(r.config), false);
  } else if (is_class(r, "FalconForTokenClassification")) {
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", d.hidden, num_labels(r.config), true);
  } else {  // FalconForQuestionAnswering
    nn::linear(b, "qa_outputs", d.hidden, 2, true);
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h). Key/value heads are what query_key_value
// holds: num_kv_heads (new architecture), 1 (multi-query) or every head. FalconConfig
// (configuration_falcon.py, 4.40): layer_norm_epsilon=1e-5. max_positions is the config's own
// max_position_embeddings, 0 when absent, as the generic reader gave it (falcon-7b/40b's configs
// have none; FalconConfig's default, 2048, sizes the rotary caches above).
ModelDims model_dims(const Config& c, const FalconDims& d) {
  const std::int64_t kv_heads = d.new_arch ? d.kv_heads : d.multi_query ? 1 : d.heads;
  return uniform_model_dims(c, {d.hidden, d.vocab, d.layers, d.heads, kv_heads, d.head_dim, d.ffn,
                                c.count_or({"max_position_embeddings"}, 0), d.tie,
                                read_norm_eps(c, {"layer_norm_epsilon"}, 1e-5)});
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& falcon_family() {
  static const Family f{
      "transformers",
      {"falcon", "RefinedWeb", "RefinedWebModel"},
      {{"FalconModel", "AutoModel"},
       {"FalconForCausalLM", "AutoModelForCausalLM"},
       {"FalconForSequenceClassification", "AutoModelForSequenceClassification"},
       {"FalconForTokenClassification", "AutoModelForTokenClassification"},
       {"FalconForQuestionAnswering", "AutoModelForQuestionAnswering"}},
      &build};
  return f;
}

}  // namespace memfit::arch
