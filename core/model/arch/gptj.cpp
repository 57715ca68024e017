// GPT-J (transformers models/gptj/modeling_gptj.py, 4.40): GPTJModel, GPTJForCausalLM,
// GPTJForSequenceClassification, GPTJForQuestionAnswering.
//
// 4.40's GPTJAttention registers a bool causal mask `bias` [1, 1, P, P] and a float32 scalar
// `masked_bias` (both non-persistent, gone from current transformers); its sinusoidal
// `embed_positions` [P, rotary_dim or n_embd] is a plain attribute there (not counted), while
// current transformers registers it as a non-persistent buffer after out_proj (kCurrentOnly).
// The LM head has a bias and is not tied (GPTJConfig.tie_word_embeddings defaults to False).
// Modules without tensors follow 4.40's modeling_gptj.py (v4.40.0; the same today): drop after
// wte; the attention's attn_dropout and resid_dropout before k_proj; the MLP's act and dropout
// after fc_out.
#include "common.h"
#include "dec_common.h"
#include "families.h"
#include "family_dims.h"

namespace memfit::arch {
namespace {

struct GptjDims {
  std::int64_t vocab, positions, hidden, layers, heads, inner, pos_embd_dim;
  bool tie;
  std::string act;
};

GptjDims read_dims(const Config& c) {
  GptjDims d{};
  d.vocab = c.dim_or({"vocab_size"}, 50400);
  d.positions = c.dim_or({"n_positions", "max_position_embeddings"}, 2048);
  d.hidden = c.dim_or({"n_embd", "hidden_size"}, 4096);
  d.layers = c.repeats_or({"n_layer", "num_hidden_layers"}, 28);
  d.heads = c.dim_or({"n_head", "num_attention_heads"}, 16);
  d.inner = c.dim_or({"n_inner"}, 4 * d.hidden);
  // rotary_dim: 64 by default; null means rotary over the whole embedding.
  const bool rotary_null = c.json().contains("rotary_dim") && c.json()["rotary_dim"].is_null();
  d.pos_embd_dim = rotary_null ? d.hidden : c.dim_or({"rotary_dim"}, 64);
  d.tie = c.flag_or({"tie_word_embeddings"}, false);
  d.act = c.string_or({"activation_function"}, "gelu_new");
  require_divisible(c, d.hidden, "n_embd", d.heads, "n_head");
  return d;
}

void attention(TreeBuilder& b, const GptjDims& d) {
  auto s = b.module("attn", "GPTJAttention");
  b.buffer("bias", {1, 1, d.positions, d.positions}, DType::kBool, false,
           BufferEra::kLegacyOnly);
  b.buffer("masked_bias", {}, DType::kF32, false, BufferEra::kLegacyOnly);
  nn::dropout(b, "attn_dropout");
  nn::dropout(b, "resid_dropout");
  nn::linear(b, "k_proj", d.hidden, d.hidden, false);
  nn::linear(b, "v_proj", d.hidden, d.hidden, false);
  nn::linear(b, "q_proj", d.hidden, d.hidden, false);
  nn::linear(b, "out_proj", d.hidden, d.hidden, false);
  b.buffer("embed_positions", {d.positions, d.pos_embd_dim}, DType::kF32, false,
           BufferEra::kCurrentOnly);
}

void model(TreeBuilder& b, const GptjDims& d) {
  nn::embedding(b, "wte", d.vocab, d.hidden);
  nn::dropout(b, "drop");
  {
    auto h = b.module("h", "ModuleList");
    for (std::int64_t i = 0; i < d.layers; ++i) {
      auto block = b.item(i, "GPTJBlock");
      nn::layer_norm(b, "ln_1", d.hidden);
      attention(b, d);
      auto mlp = b.module("mlp", "GPTJMLP");
      nn::linear(b, "fc_in", d.hidden, d.inner);
      nn::linear(b, "fc_out", d.inner, d.hidden);
      nn::activation(b, "act", d.act);
      nn::dropout(b, "dropout");
    }
  }
  nn::layer_norm(b, "ln_f", d.hidden);
}

TensorTree tree(const BuildRequest& r, const GptjDims& d) {
  TreeBuilder b{std::string(r.class_name)};
  b.set_no_split({"GPTJBlock"});
  if (is_class(r, "GPTJModel")) {
    model(b, d);
    return b.finish();
  }
  {
    auto t = b.module("transformer", "GPTJModel");
    model(b, d);
  }
  if (is_class(r, "GPTJForCausalLM")) {
    if (d.tie) dec::tied_linear_with_bias(b, "lm_head", "transformer.wte.weight", d.vocab);
    else nn::linear(b, "lm_head", d.hidden, d.vocab, true);
  } else if (is_class(r, "GPTJForSequenceClassification")) {
    nn::linear(b, "score", d.hidden, num_labels(r.config), false);
  } else {  // GPTJForQuestionAnswering: qa_outputs is Linear(hidden, num_labels)
    nn::linear(b, "qa_outputs", d.hidden, num_labels(r.config), true);
  }
  return b.finish();
}

// The model's dims from the same reads (family_dims.h). GPTJConfig (configuration_gptj.py, 4.40):
// layer_norm_epsilon=1e-5; every head has its own key and value.
ModelDims model_dims(const Config& c, const GptjDims& d) {
  return uniform_model_dims(c, {d.hidden, d.vocab, d.layers, d.heads, d.heads, d.hidden / d.heads,
                                d.inner, d.positions, d.tie,
                                read_norm_eps(c, {"layer_norm_epsilon"}, 1e-5)});
}

TensorTree build(const BuildRequest& r) {
  return build_with_dims(r, read_dims(r.config), tree, model_dims);
}

}  // namespace

const Family& gptj_family() {
  static const Family f{"transformers",
                        {"gptj"},
                        {{"GPTJModel", "AutoModel"},
                         {"GPTJForCausalLM", "AutoModelForCausalLM"},
                         {"GPTJForSequenceClassification", "AutoModelForSequenceClassification"},
                         {"GPTJForQuestionAnswering", "AutoModelForQuestionAnswering"}},
                        &build};
  return f;
}

}  // namespace memfit::arch
