// GPTBigCode (transformers models/gpt_bigcode/modeling_gpt_bigcode.py, 4.40): GPTBigCodeModel,
// GPTBigCodeForCausalLM, GPTBigCodeForSequenceClassification, GPTBigCodeForTokenClassification.
//
// Unlike GPT-2 the causal mask is one bool buffer `bias` [P, P] on the model (registered after
// ln_f), non-persistent; it is still registered by current transformers. Multi-query attention
// (the default) fuses q with a single shared k/v head: c_attn is [hidden + 2*head_dim, hidden].
// Modules without tensors follow 4.40's modeling_gpt_bigcode.py (v4.40.0): drop after wpe; the
// attention's attn_dropout (a float in current transformers) and resid_dropout after c_proj; the
// MLP's act and dropout after its c_proj; the token classifier's dropout before classifier.
#include <fmt/format.h>

#include "common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct BigCodeDims {
  std::int64_t vocab, positions, hidden, layers, heads, inner, kv_dim;
  bool multi_query, cross_attention, tie;
  std::string act;
};

BigCodeDims read_dims(const Config& c) {
  BigCodeDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 50257);
  d.positions = c.dim_or({"n_positions", "max_position_embeddings"}, 1024);
  d.hidden = c.dim_or({"n_embd", "hidden_size"}, 768);
  d.layers = c.repeats_or({"n_layer", "num_hidden_layers"}, 12);
  d.heads = c.dim_or({"n_head", "num_attention_heads"}, 12);
  d.inner = c.dim_or({"n_inner"}, 4 * d.hidden);
  d.multi_query = c.flag_or({"multi_query"}, true);
  d.cross_attention = c.flag_or({"add_cross_attention"}, false);
  d.tie = c.flag_or({"tie_word_embeddings"}, true);
  d.act = c.string_or({"activation_function"}, "gelu_pytorch_tanh");
  require_divisible(c, d.hidden, "n_embd", d.heads, "n_head");
  d.kv_dim = (d.multi_query ? 1 : d.heads) * (d.hidden / d.heads);
  if (d.cross_attention && d.multi_query)
    throw Error(ErrorCode::kInvalidValue,
                fmt::format("{}: 'add_cross_attention' is not implemented for multi-query "
                            "attention ('multi_query': true) in transformers",
                            c.where()));
  return d;
}

void attention(TreeBuilder& b, std::string_view name, const BigCodeDims& d, bool cross) {
  auto s = b.module(name, "GPTBigCodeAttention");
  if (cross) {
    nn::linear(b, "c_attn", d.hidden, 2 * d.hidden);
    nn::linear(b, "q_attn", d.hidden, d.hidden);
  } else {
    nn::linear(b, "c_attn", d.hidden, d.hidden + 2 * d.kv_dim);
  }
  nn::linear(b, "c_proj", d.hidden, d.hidden);
  nn::dropout(b, "attn_dropout", BufferEra::kLegacyOnly);
  nn::dropout(b, "resid_dropout");
}

void model(TreeBuilder& b, const BigCodeDims& d) {
  nn::embedding(b, "wte", d.vocab, d.hidden);
  nn::embedding(b, "wpe", d.positions, d.hidden);
  nn::dropout(b, "drop");
  {
    auto h = b.module("h", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto block = b.item(i, "GPTBigCodeBlock");
      nn::layer_norm(b, "ln_1", d.hidden);
      attention(b, "attn", d, false);
      nn::layer_norm(b, "ln_2", d.hidden);
      if (d.cross_attention) {
        attention(b, "crossattention", d, true);
        nn::layer_norm(b, "ln_cross_attn", d.hidden);
      }
      auto mlp = b.module("mlp", "GPTBigCodeMLP");
      nn::linear(b, "c_fc", d.hidden, d.inner);
      nn::linear(b, "c_proj", d.inner, d.hidden);
      nn::activation(b, "act", d.act);
      nn::dropout(b, "dropout");
    }
  }
  nn::layer_norm(b, "ln_f", d.hidden);
  b.buffer("bias", {d.positions, d.positions}, DType::kBool, false);
}

TensorTree tree(const BuildRequest& r, const BigCodeDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"GPTBigCodeBlock"});
  if (is_class(r, "GPTBigCodeModel")) {
    model(b, d);
    return b.finish();
  }
  {
    auto t = b.module("transformer", "GPTBigCodeModel");
    model(b, d);
  }
  if (is_class(r, "GPTBigCodeForCausalLM")) {
    if (d.tie) nn::tied_linear(b, "lm_head", "transformer.wte.weight");
    else nn::linear(b, "lm_head", d.hidden, d.vocab, false);
  } else if (is_class(r, "GPTBigCodeForSequenceClassification")) {
    nn::linear(b, "score", d.hidden, num_labels(r.config), false);
  } else {  // GPTBigCodeForTokenClassification
    nn::dropout(b, "dropout");
    nn::linear(b, "classifier", d.hidden, num_labels(r.config), true);
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h): one key/value head with multi_query.
// GPTBigCodeConfig (configuration_gpt_bigcode.py, 4.40): layer_norm_epsilon=1e-5.
ModelDims model_dims(const Config& c, const BigCodeDims& d) {
  return uniform_model_dims(c, {d.hidden, d.vocab, d.layers, d.heads, d.multi_query ? 1 : d.heads,
                                d.hidden / d.heads, d.inner, d.positions, d.tie,
                                read_norm_eps(c, {"layer_norm_epsilon"}, 1e-5)});
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& gpt_bigcode_family() {
  static const Family f{
      "transformers",
      {"gpt_bigcode"},
      {{"GPTBigCodeModel", "AutoModel"},
       {"GPTBigCodeForCausalLM", "AutoModelForCausalLM"},
       {"GPTBigCodeForSequenceClassification", "AutoModelForSequenceClassification"},
       {"GPTBigCodeForTokenClassification", "AutoModelForTokenClassification"}},
      &build};
  return f;
}

}  // namespace memfit::arch
